"""The steps beyond the paper: they run only in some ranges of d and K, or cost extra fits.

The core of a fit is the paper's three steps, with what helps on every
workload (the ICA-consistency scorer, the joint re-estimation and polish of
the directions, the residual pruning rule, the Gaussian guard). The steps
here refine it; ``CREATOR(refine=...)`` drives them (``"auto"``: each by the
rule its module states; None: the core alone):

* :mod:`.revision` -- the pruned graph revised by the likelihood of the
  disentangled SEM (``revise_graph``);
* :mod:`.graph_search` -- the finished graph searched by the fitted features'
  score (``search_graph``);
* :mod:`.order_branches` -- the ordering's close calls taken the other way
  (``order_branches``);
* :mod:`.likelihood` -- features refined by the likelihood of their graph
  (``disentangle``), and the score the other steps compare graphs by;
* :mod:`.measurement_noise` -- second moments corrected for Gaussian noise
  on the measurements (``measurement_noise``).
"""
