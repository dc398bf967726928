"""The shared online-learning backend: losses, kernels and linear learners over sparse rows."""
from .losses import LOSSES, resolve_loss
from .sgd import LinearSGD, OPTIMIZERS

__all__ = ["LOSSES", "resolve_loss", "LinearSGD", "OPTIMIZERS"]
