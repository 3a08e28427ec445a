"""spanscore where models are trained: Hugging Face transformers (and the ``evaluate`` library),
spaCy and Flair. Each module imports its library when used and needs that library's extra; the
core never imports them.
"""
