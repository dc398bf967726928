"""Streaming readers: each yields :class:`Document` records and never loads a corpus."""

from __future__ import annotations

from nbsvm._lazy import lazy_exports

_EXPORTS = {
    "parse_reviews": "nbsvm.io.blitzer",
    "read_reviews": "nbsvm.io.blitzer",
    "review_members": "nbsvm.io.blitzer",
    "Document": "nbsvm.io.document",
    "read_aclimdb": "nbsvm.io.folders",
    "read_lines": "nbsvm.io.labeled_lines",
    "read_text_lines": "nbsvm.io.labeled_lines",
    "FORMATS": "nbsvm.io.readers",
    "detect_format": "nbsvm.io.readers",
    "read_inputs": "nbsvm.io.readers",
    "SPARSE_FORMATS": "nbsvm.io.sparse",
    "SparseRow": "nbsvm.io.sparse",
    "detect_index_base": "nbsvm.io.sparse",
    "detect_sparse_format": "nbsvm.io.sparse",
    "read_blitzer": "nbsvm.io.sparse",
    "read_named": "nbsvm.io.sparse",
    "read_svmlight": "nbsvm.io.sparse",
    "read_table": "nbsvm.io.tables",
}
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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
