"""The examples in the package's docstrings are part of its documentation: run them."""
import doctest
import importlib

import pytest

# modules whose docstrings hold examples (a module listed here must keep at least one)
MODULES = ["nbsvm.evaluation.metrics", "nbsvm.io.readers", "nbsvm.io.decoding", "nbsvm.io.labeled_lines", "nbsvm.io.sparse", "nbsvm.io.blitzer", "nbsvm.text.tokenize",
           "nbsvm.text.hashing", "nbsvm.lexicon.nblexicon", "nbsvm.models.nbsvm", "nbsvm.learners.options", "nbsvm.memory",
           "nbsvm.learners.base", "nbsvm.data.rows", "nbsvm.learners.targets", "nbsvm.learners.sgd", "nbsvm.learners.linear",
           "nbsvm.learners.schedules", "nbsvm.learners.regularizers", "nbsvm.learners.pegasos",
           "nbsvm.learners.pa", "nbsvm.learners.multiclass", "nbsvm.learners.multilabel",
           "nbsvm.learners.ogd", "nbsvm.models.transform", "nbsvm.data.cachestore", "nbsvm.workflows.tune", "nbsvm.evaluation.bucket_names",
           "nbsvm.datasets", "nbsvm.learners.calibrator"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no examples any more"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
