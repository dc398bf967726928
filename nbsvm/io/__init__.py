"""Streaming readers: each yields :class:`Document` records and never loads a corpus."""
from .readers import (Document, FORMATS, read_aclimdb, read_lines, read_text_lines, read_table,
                      read_inputs, detect_format)

__all__ = ["Document", "FORMATS", "read_aclimdb", "read_lines", "read_text_lines", "read_table",
           "read_inputs", "detect_format"]
