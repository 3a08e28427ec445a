"""Human review of partial matches: tasks in a database, judgements with their history, agreement.

Needs the extra ``review`` (SQLAlchemy). Items come from a run (``items_from_run``), from the
paper's own Good/Bad review (``paper_judgements``) or from expert scores (``expert_judgements``);
``stats`` gives Table 5 of Kong and Sullivan per criterion with Cohen's kappa and Krippendorff's
alpha, and ``export_rows`` the judgements format that ``spanscore judge`` reads.
"""

from __future__ import annotations

from .agreement import cohen_kappa, krippendorff_alpha
from .sources import expert_judgements, items_from_report, items_from_run, paper_judgements, run_summary
from .store import Item, Store, ordered
from .summary import export_rows, stats, write_export

__all__ = [
    "Item",
    "Store",
    "cohen_kappa",
    "expert_judgements",
    "export_rows",
    "items_from_report",
    "items_from_run",
    "krippendorff_alpha",
    "ordered",
    "paper_judgements",
    "run_summary",
    "stats",
    "write_export",
]
