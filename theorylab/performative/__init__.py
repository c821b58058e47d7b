"""Performative prediction in federated learning (seed 003, digest shared/spec/003_performative_fl.md):
P-FedAvg's aggregation schemes and their laws, solvers for the performatively stable (PS) and optimal (PO)
points, the symbolic derivation path, and the constants of the paper's convergence theorems."""
