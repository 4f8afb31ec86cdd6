"""The models that predict a kernel's speed on a problem: the analytic model (`analytic`), tree ensembles (`forest`),
CK's LightGBM files and ckast's residual models on top of the analytic one (`lightgbm_model`), the features trained
models read (`inputs`, with ckast's derived tiling features, `derived`), the domain a trained model has seen
(`domain`), the fit of the analytic model's constants on measured runs (`calibrate`) and the largest model read
(`limits`)."""
