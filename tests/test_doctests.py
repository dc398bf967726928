"""The examples in the package's docstrings are part of its documentation: run them."""
import doctest
import importlib

import pytest

# modules whose docstrings hold examples (a module listed here must keep at least one)
MODULES = ["nbsvm.metrics", "nbsvm.io.readers", "nbsvm.io.sparse", "nbsvm.io.blitzer", "nbsvm.text.tokenize",
           "nbsvm.text.hashing", "nbsvm.lexicon", "nbsvm.nbsvm", "nbsvm.learn", "nbsvm.memory",
           "nbsvm.online.base", "nbsvm.online.rows", "nbsvm.online.sgd", "nbsvm.online.linear",
           "nbsvm.online.schedules", "nbsvm.online.regularizers", "nbsvm.online.pegasos",
           "nbsvm.online.pa", "nbsvm.online.multiclass", "nbsvm.online.multilabel",
           "nbsvm.online.ogd", "nbsvm.transform", "nbsvm.cachestore", "nbsvm.tune", "nbsvm.explain"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no examples any more"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
