"""Readers: files and Python data in, span sets and the text they point into out."""
