"""The backend's numba kernels, apart from the learner classes that call them: arrays and
scalars in, updates in place. ``linear``: the one SGD and one AdaGrad step loop over explicit
or table rows; ``table``: NBSVM's table-row entries and scoring; ``multi``: PA, MIRA and the
multi-class and multi-label hinges; ``projected``: Pegasos and OGD; ``weight_tricks``: the
scaled weight vector, lazy L1 and averaging they share; ``prefetch``: how far rows are
prefetched. The losses they call are compiled in ``losses`` (names and codes: :mod:`nbsvm.learners.losses`)."""
