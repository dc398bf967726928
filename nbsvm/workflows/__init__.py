"""What builds and uses estimators, above them: a training job with its held-out
evaluation and checkpoints (``nbsvm train``), tuning a grid (``nbsvm tune``), Dask
training over shards, ``nbsvm learn`` on sparse files, and quantizing model files."""
