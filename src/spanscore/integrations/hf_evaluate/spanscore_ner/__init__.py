"""The folder that ``evaluate.load`` reads (``spanscore_ner.py``); a package only so that it is installed
with spanscore. Importing it imports nothing of ``evaluate``."""
