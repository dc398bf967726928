"""What users fit and keep: :class:`NBSVMClassifier`, the :class:`NBFeatures` transformer,
and their ``.npz`` + JSON files."""
