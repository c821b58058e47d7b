"""Theory calculators: right-hand sides of papers' bounds with explicit constants, step-size conditions, and the
exact staleness moments that Lemma 2's bounds are compared with."""
