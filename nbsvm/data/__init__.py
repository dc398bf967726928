"""Step 4 of the data flow: documents -> CSR batches of bucket ids, the on-disk feature
cache, caches kept between runs, and the block shuffle every epoch reads through."""
