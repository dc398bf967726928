"""Step 7 of the data flow: streaming evaluation and prediction, metrics, explanations and
figures."""
