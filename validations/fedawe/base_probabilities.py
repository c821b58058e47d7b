"""FedAWE App. J.3, Fig. 5 (seed 000 App. J.3; digest 000 §5, §6.6): how FedAWE's recipe spreads the clients' base
probabilities.  The draws are those of :mod:`theorylab.figures.fedawe_fig4_5` (its docstring gives the setting)."""

from __future__ import annotations

import numpy as np

from theorylab.checks import at_least, in_interval, ours
from theorylab.claims import Evidence, claim
from theorylab.figures import fedawe_fig4_5

PHI_MEANS = np.array([0.5] * 5 + [0.25] * 5)  # E[phi_c] = Phi_c / 2


@claim("fedawe.fig5.majority_below_half",
       "seed 000 App. J.3, Fig. 5; digest 000 §5, §6.6",
       "With m = 100 clients, a Dirichlet(0.1) partition and FedAWE's recipe p_i = <nu_i, phi>, the majority of the "
       "base probabilities p_i are below 0.5.",
       kind="reproduction", where="App. J.3, Fig. 5",
       quote="It can be seen that the majority of  $p_i$ 's are below 0.5.")
def majority_below_half(ctx) -> Evidence:
    seeds = range(ctx.pick(200, 2000))
    draws = np.stack([fedawe_fig4_5.base_probabilities(seed) for seed in seeds])
    below = (draws < 0.5).mean(1)
    mean_p = float(PHI_MEANS.mean())
    return Evidence([
        at_least("fraction of the 100 p_i below 0.5, one draw (Fig. 5)", float(below.mean()), 0.5,
                 basis="monte_carlo", samples=below,
                 note=f"the majority holds in {np.mean(below > 0.5):.1%} of {len(below)} draws; as alpha -> 0 "
                      "(one class per client) the fraction tends to (5 x 1/2 + 5 x 1)/10 = 0.75"),
        ours(in_interval("E[p_i] over clients and draws", draws.mean(1), mean_p,
                         note="closed form: by the classes' symmetry E[nu_ic] = 1/10, so E[p_i] = sum_c E[phi_c]/10 "
                              "= (5 x 0.5 + 5 x 0.25)/10"),
             "a check of our recipe, not of the paper"),
    ], figure=str(fedawe_fig4_5.render(ctx)), deviations=[
        f"{len(below)} draws (partition and phi re-drawn per seed) instead of the paper's one; balanced labels of "
        "CIFAR-10's training size (the paper does not say which dataset Fig. 5 uses)."])
