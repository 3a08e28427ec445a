"""The counting stages, in the order data flows through them: spans (``spans``, ``encoding``),
matching (``matching``, ``criteria``), counts (``counts``, ``parts``, ``documents``) and scores
(``scores``), with the options that change a number (``scoring``)."""
