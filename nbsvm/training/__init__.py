"""Step 6 of the data flow: the one epoch loop and what drives it (fitting a stream of
documents, ``partial_fit``, ``nbsvm learn`` on sparse files, checkpoints, tuning, Dask)."""
