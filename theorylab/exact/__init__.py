"""Exact computations that replace Monte Carlo where the dynamics allow: moments of
active-set functionals under Bernoulli participation, first/second moments of the
FedAvg family and of P-FedAvg on quadratics, and FedAWE's two-client staleness chain."""
