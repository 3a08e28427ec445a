"""Drop-in replacements for other scorers' Python APIs, computed by spanscore's engine.

``spanscore.compat.seqeval`` and ``spanscore.compat.nervaluate`` keep those libraries' function
signatures and outputs, so switching is a change of imports (docs/migrating.md); every deliberate
difference is listed in each module and pinned by a test.
"""
