"""The block shuffle both caches share (nbsvm/data/shuffle.py): hand-computed groups, every row
once per epoch, and the same draws for the text cache and the sparse-row cache."""
import numpy as np

from nbsvm.data.shuffle import block_groups, group_order


def test_groups_by_hand():
    # 10 rows of 10 bytes: blocks of 20 bytes are 2 rows; a 45-byte buffer holds 2 blocks
    # (row_bytes 1: a row's own arrays left out of these small figures)
    assert list(block_groups(10, 100, None, buffer_bytes=45, block_bytes=20, row_bytes=1)) == \
        [[(0, 2), (2, 4)], [(4, 6), (6, 8)], [(8, 10)]]
    # everything fits: one block, one group
    assert list(block_groups(10, 100, None, buffer_bytes=100, block_bytes=20, row_bytes=1)) == \
        [[(0, 10)]]
    assert list(block_groups(0, 0, None)) == []
    # a row larger than a block is a block of its own
    assert list(block_groups(3, 3000, None, buffer_bytes=1500, block_bytes=10)) == \
        [[(0, 1)], [(1, 2)], [(2, 3)]]


def test_every_row_once_and_the_draws_of_a_seeded_generator():
    rng = np.random.default_rng(7)
    seen = []
    for bounds in block_groups(1000, 40_000, rng, buffer_bytes=4000, block_bytes=800,
                               row_bytes=1):
        rows = np.concatenate([np.arange(a, z) for a, z in bounds])
        assert 40 * len(rows) <= 4000
        seen.extend(rows[group_order(rng, len(rows))])
    assert sorted(seen) == list(range(1000)) and seen != list(range(1000))
    # the draws: one permutation of the blocks, then one of each group's rows
    ref = np.random.default_rng(7)
    blocks = ref.permutation(50)                        # 1000 rows / 20 rows a block
    first = np.concatenate([np.arange(20 * b, 20 * b + 20) for b in blocks[:5]])
    assert seen[:100] == first[ref.permutation(100)].tolist()


def test_both_caches_visit_rows_as_block_groups_says(tmp_path):
    """The text cache and `nbsvm learn`'s row cache read the groups block_groups gives."""
    from nbsvm.data.cache import CacheWriter
    from nbsvm.data.batches import hash_batches
    from nbsvm.io.document import Document
    from nbsvm.data.rowcache import RowWriter
    from nbsvm.data.rowencoder import RowEncoder, read_rows
    from nbsvm.text.hashing import Hasher

    h = Hasher(ngrams=1, n_bits=10)
    docs = [Document(str(i % 2), " ".join(f"w{i}_{j}" for j in range(5)), "mem", i + 1)
            for i in range(300)]
    writer = CacheWriter(tmp_path / "c", h)
    with writer:
        for batch in hash_batches(iter(docs), h):
            writer.add(batch)
        cache = writer.close()
    got = [len(offsets) - 1 for _, offsets, _, _, _ in
           cache.shuffled_groups(np.random.default_rng(3), buffer_bytes=1000, block_bytes=200)]
    want = [sum(z - a for a, z in g) for g in
            block_groups(cache.n_docs, 4 * cache.n_ids, np.random.default_rng(3), 1000, 200)]
    assert got == want and len(want) > 3

    path = tmp_path / "rows.svm"
    path.write_text("".join(f"{i % 2} " + " ".join(f"{j}:1" for j in range(i % 4 + 1)) + "\n"
                            for i in range(300)))
    records = list(read_rows(path, "svmlight"))
    with RowWriter(tmp_path / "rows", "binary") as writer:
        writer.add(records, *RowEncoder("svmlight").encode(records))
    rc = writer.close()
    got = [len(rows) for rows, _, _ in
           rc.shuffled_blocks(np.random.default_rng(3), 8, buffer_bytes=2000, block_bytes=400)]
    want = [sum(z - a for a, z in g) for g in
            block_groups(300, 16 * rc.nnz + 8 * 300, np.random.default_rng(3), 2000, 400)]
    assert got == want and len(want) > 3


def test_rows_of_no_ids_are_grouped_within_the_buffer_too():
    """A hunt: rows of (almost) no ids were one group of every row (groups were sized by
    the ids alone), so a training's memory grew with the corpus: 259 MB for a million
    empty documents, 435 MB for six million. Each row counts ROW_BYTES at least."""
    from nbsvm.config import SHUFFLE_BUFFER_BYTES
    from nbsvm.data.shuffle import ROW_BYTES

    n = 50_000_000
    groups = list(block_groups(n, 0, None))
    rows = [sum(z - a for a, z in g) for g in groups]
    assert sum(rows) == n and max(rows) * ROW_BYTES <= SHUFFLE_BUFFER_BYTES
    # rows of ids grouped as before: IMDB's 25,000 reviews of 16 million ids
    imdb = (25_000, 4 * 16_000_000, np.random.default_rng(0))
    assert list(block_groups(*imdb)) == \
        list(block_groups(*imdb[:2], np.random.default_rng(0), row_bytes=0))
