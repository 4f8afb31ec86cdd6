"""ckast's public Python API, one module per stage of the work: kernel configs and emitting them (`configs`),
libraries from rule sets (`libraries`), choosing kernels for problems (`choosing`), and checking emitted code
(`checks`). The package root (`ckast`) re-exports every public name; the `ckast` command is built on them."""
