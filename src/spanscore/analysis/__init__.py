"""Analyses over per-document counts: intervals and paired tests (``significance``) and
breakdowns by document field (``breakdown``)."""
