"""The integer codes the compiled losses switch on (:mod:`.losses`), without numba: the
registry of :mod:`nbsvm.learners.losses` names them."""

HINGE, LOG, SQUARED_HINGE, MODIFIED_HUBER = 0, 1, 2, 3
SQUARED = 4  # regression: (p - y)^2 / 2
SOFTMAX, MULTICLASS_HINGE = 5, 6  # of all K scores at once (multiclass_loss_grad)
RULE_PA, RULE_PA1, RULE_PA2 = 0, 1, 2  # the passive-aggressive steps: PA, PA-I, PA-II
