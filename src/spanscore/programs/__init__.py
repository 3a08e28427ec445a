"""Programs built on the library: corpus tools (``corpus``), label transforms (``transform``),
the paper's experiment (``demo``), the CRF and Flair taggers (``tagger``) and the learned judge
(``judge``)."""
