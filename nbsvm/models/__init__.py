"""What users fit and keep, with the engine that fits it: :class:`NBSVMClassifier`, the
:class:`NBFeatures` transformer, their ``.npz`` + JSON files, and the fit engine (counting
into columns, epochs, warm starts, ``partial_fit``, calibration, early stopping, ``auto``)."""
