"""What ``evaluate`` returns: a plain dict (JSON as it is, what the CLI and the server
print) that also shows itself in a notebook (``_repr_html_``) and gives its tables as pandas
DataFrames (:class:`~nbsvm.evaluation.explain.Explanation` is ``explain_text``'s)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


class Report(dict):
    """An evaluation report (``accuracy``, ``macro_f1``, ``roc_auc``, ``per_class``,
    ``confusion_matrix``, ...; a multi-label or regression task's own metrics). In Jupyter
    it shows its figures and tables; :meth:`frame`, :meth:`per_class` and
    :meth:`confusion` are DataFrames."""

    def frame(self) -> pd.DataFrame:
        """The tidy table of ``nbsvm eval --output``: ``metric, class, value``."""
        from nbsvm.evaluation.metrics import report_table

        return report_table(self)

    def per_class(self) -> pd.DataFrame:
        """One row per class (label): precision, recall, F1, support (and ROC AUC)."""
        import pandas as pd

        return pd.DataFrame.from_dict(self.get("per_class", {}), orient="index")

    def confusion(self) -> pd.DataFrame:
        """Rows: true class, columns: predicted class (single-label reports)."""
        import pandas as pd

        if "confusion_matrix" not in self:
            raise KeyError("a multi-label or regression report has no confusion matrix")
        return pd.DataFrame(
            self["confusion_matrix"], index=self["classes"], columns=self["classes"]
        )

    def headline(self) -> list[tuple[str, float]]:
        """The report's single figures, in the order the CLI prints them."""
        names = (
            "accuracy",
            "log_loss",
            "ece",
            "roc_auc",
            "macro_roc_auc",
            "macro_f1",
            "hamming_loss",
            "micro_f1",
            "subset_accuracy",
            "mse",
            "mae",
            "r2",
        )
        return [(n, self[n]) for n in names if isinstance(self.get(n), (int, float))]

    def _repr_html_(self) -> str:
        figures = "".join(
            f"<tr><th style='text-align:left'>{html.escape(n)}</th><td>{v:.4f}</td></tr>"
            for n, v in self.headline()
        )
        parts = [f"<table>{figures}</table>"]
        if self.get("per_class"):
            parts.append(self.per_class().to_html(float_format=lambda v: f"{v:.4f}"))
        if "confusion_matrix" in self:
            parts.append(
                "<p>confusion matrix (rows: true, columns: predicted)</p>"
                + self.confusion().to_html()
            )
        return "".join(parts)
