#!/usr/bin/python3
"""Prints the expected values of tests/tensor/losses_test.cpp: PyTorch's loss formulas
(torch.nn.functional.l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy_with_logits)
written out in numpy, in float64, on the test's inputs. Run it to regenerate the numbers."""
import numpy as np

prediction = np.array([0.5, -1.25, 3.0, 0.1, -0.4, 2.2])
target = np.array([0.0, 1.0, 0.5, 0.1, -2.9, 2.0])
d = np.abs(prediction - target)


def smooth_l1(beta):
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def huber(delta):
    return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


logits = np.array([-30.0, -2.0, -0.3, 0.0, 0.7, 4.0, 25.0, 1.5])
labels = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.25, 1.0, 0.0])
bce = -(labels * np.log(1 / (1 + np.exp(-logits))) +
        (1 - labels) * np.log(1 - 1 / (1 + np.exp(-logits))))
# The naive form above loses precision at |x| = 25..30; the stable form is exact there.
bce_stable = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))

print("l1 mean %.9g sum %.9g" % (d.mean(), d.sum()))
for beta in (1.0, 0.5, 2.0):
    print("smooth_l1 beta %g mean %.9g sum %.9g" % (beta, smooth_l1(beta).mean(), smooth_l1(beta).sum()))
for delta in (1.0, 0.5, 2.0):
    print("huber delta %g mean %.9g sum %.9g" % (delta, huber(delta).mean(), huber(delta).sum()))
print("bce mean %.9g sum %.9g (naive %.9g)" % (bce_stable.mean(), bce_stable.sum(), bce.mean()))

try:  # the same numbers from PyTorch itself, when python3-torch is installed
    import torch
    import torch.nn.functional as F
    p, t = torch.tensor(prediction), torch.tensor(target)
    print("torch l1 %.9g smooth_l1(0.5) %.9g huber(2) %.9g bce %.9g" % (
        F.l1_loss(p, t), F.smooth_l1_loss(p, t, beta=0.5), F.huber_loss(p, t, delta=2.0),
        F.binary_cross_entropy_with_logits(torch.tensor(logits), torch.tensor(labels))))
except ImportError:
    pass

# gaussian_kl_divergence: mu = the prediction, logvar = the target, as [2, 3] (2 samples of a
# 3-number code), as PyTorch's VAE example writes it: -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).
mu = prediction.reshape(2, 3)
logvar = target.reshape(2, 3)
kl_rows = -0.5 * (1 + logvar - mu ** 2 - np.exp(logvar)).sum(axis=1)
print("gaussian_kl mean %.9g sum %.9g" % (kl_rows.mean(), kl_rows.sum()))
