"""The selector as C++: features, applicability and predictors lowered to ckast nodes."""
