"""Figures of the benchmark (matplotlib, Agg): the paper's box plots and ablations."""

from __future__ import annotations

from pathlib import Path

__all__ = ["make_figures"]


def make_figures(df, out: str | Path) -> list[Path]:
    """Write PNG figures next to the results; returns their paths.

    * ``main_<metric>_setting<s>_K<d|2d>.png``: box plots of LocR^2 and SHD per
      d, one box per method (the paper's Figures 2-4);
    * ``ablation_sigma.png`` / ``ablation_beta.png``: mean LocR^2 and
      topological divergence against the weight scale / noise shape.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ok = df[df["status"] == "ok"]
    paths = []
    main = ok[ok["grid"] == "main"]
    methods = list(dict.fromkeys(ok["method"]))
    for setting in sorted(main["setting"].unique()):
        for kname, factor in (("d", 1), ("2d", 2)):
            sub = main[(main["setting"] == setting)
                       & (main["n_environments"] == factor * main["n_latent"])]
            if sub.empty:
                continue
            ds = sorted(sub["n_latent"].unique())
            for metric, label in (("locr2", "LocR²"), ("shd", "SHD")):
                fig, ax = plt.subplots(figsize=(8, 3.6))
                width = 0.8 / len(methods)
                for m_i, method in enumerate(methods):
                    data = [sub[(sub["n_latent"] == d) & (sub["method"] == method)][metric]
                            for d in ds]
                    pos = [x + (m_i - (len(methods) - 1) / 2) * width for x in range(len(ds))]
                    bp = ax.boxplot(data, positions=pos, widths=width * 0.9,
                                    patch_artist=True, showfliers=False)
                    for patch in bp["boxes"]:
                        patch.set_facecolor(f"C{m_i}")
                    ax.plot([], [], color=f"C{m_i}", lw=8, label=method)
                ax.set_xticks(range(len(ds)), [f"d={d}" for d in ds])
                ax.set_ylabel(label)
                ax.set_title(f"{label}, setting ({setting}), K={kname}")
                ax.legend(fontsize=7, loc="best")
                fig.tight_layout()
                path = out / f"main_{metric}_setting{setting}_K{kname}.png"
                fig.savefig(path, dpi=90)
                plt.close(fig)
                paths.append(path)
    for grid, col, xlabel in (("sigma", "weight_scale", "weight scale σ"),
                              ("beta", "noise_shape", "noise shape β (2 = Gaussian)")):
        sub = ok[ok["grid"] == grid]
        if sub.empty:
            continue
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
        for method in methods:
            g = sub[sub["method"] == method].groupby(col)
            for ax, metric in zip(axes, ("locr2", "shd", "topological_divergence")):
                mean = g[metric].mean()
                ax.plot(mean.index, mean.values, marker="o", label=method)
                ax.set_xlabel(xlabel)
                ax.set_ylabel(metric)
                if grid == "sigma":
                    ax.set_xscale("log")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Ablation: {xlabel}, d=K=5, setting (1)")
        fig.tight_layout()
        path = out / f"ablation_{grid}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths
