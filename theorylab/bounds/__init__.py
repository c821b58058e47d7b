"""Theory calculators: right-hand sides of papers' bounds with explicit constants, step-size conditions, and
exact reference quantities (staleness moments, small exact chains) that claims compare simulations with."""
