"""Ranking kernels for problems and scoring the rankings: one problem (`rank`), many at once (`batch`), against
measurements (`evaluate`, `best_of`), under shift (`shift`), and training models on them (`train`)."""
