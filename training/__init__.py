"""Training pipeline of the house-price model (kc-hgb-*), see training/README.md."""
