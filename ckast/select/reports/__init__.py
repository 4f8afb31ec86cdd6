"""What selection tells a user: reports (`report`), workloads and the libraries chosen for them (`workload`),
plots (`eval_plot`, `plot_svg`) and progress on a terminal (`progress`)."""
