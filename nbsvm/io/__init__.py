"""Streaming readers: each yields :class:`Document` records and never loads a corpus."""

from nbsvm.io.blitzer import parse_reviews, read_reviews, review_members
from nbsvm.io.document import Document
from nbsvm.io.folders import read_aclimdb
from nbsvm.io.labeled_lines import read_lines, read_text_lines
from nbsvm.io.readers import FORMATS, detect_format, read_inputs
from nbsvm.io.sparse import (
    SPARSE_FORMATS,
    SparseRow,
    detect_index_base,
    detect_sparse_format,
    read_blitzer,
    read_named,
    read_svmlight,
)
from nbsvm.io.tables import read_table

__all__ = [
    "SparseRow",
    "SPARSE_FORMATS",
    "read_svmlight",
    "read_blitzer",
    "read_named",
    "detect_index_base",
    "detect_sparse_format",
    "Document",
    "FORMATS",
    "read_aclimdb",
    "read_lines",
    "read_text_lines",
    "read_table",
    "read_inputs",
    "detect_format",
    "parse_reviews",
    "read_reviews",
    "review_members",
]
