"""JSON files the project reads back (a feature cache's and a training cache's
``meta.json``, a cache's ``sample.json``) nested too deeply to parse are unusable files
like any other (issue 33, item 5): an NBSVMError naming the folder, never a RecursionError."""
import pytest

from nbsvm.data.cache import FeatureCache
from nbsvm.data.rowcache import RowCache
from nbsvm.errors import NBSVMError

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("kind, message", [(FeatureCache, "unusable feature cache"),
                                           (RowCache, "unusable training cache")])
def test_a_deeply_nested_meta_json_is_an_unusable_cache(tmp_path, kind, message):
    (tmp_path / "meta.json").write_text(DEEP)
    with pytest.raises(NBSVMError, match=message) as e:
        kind(tmp_path)
    assert str(tmp_path) in str(e.value)


def test_a_deeply_nested_sample_is_no_sample(tmp_path):
    from nbsvm.models.fitting import read_sample

    class Cache:
        folder = tmp_path
    (tmp_path / "sample.json").write_text(DEEP)
    assert read_sample(Cache()) == []
