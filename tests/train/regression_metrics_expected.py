#!/usr/bin/python3
"""The expected numbers of tests/train/regression_test.cpp's metrics case: scikit-learn's
RMSE (per output, then averaged), MAE and R^2 (uniform_average) on the test's values."""
import numpy as np
from sklearn.metrics import mean_squared_error, mean_absolute_error, r2_score
y=np.array([[3.0,-1.0],[0.5,2.0],[2.0,2.5],[7.0,4.0],[-1.5,0.0]])
p=np.array([[2.5,-0.5],[0.0,2.0],[2.0,3.0],[8.0,3.0],[-1.0,0.5]])
print("rmse", np.mean(np.sqrt(mean_squared_error(y,p,multioutput='raw_values'))))
print("mae", mean_absolute_error(y,p), "r2", r2_score(y,p))
print("single", np.sqrt(mean_squared_error(y[:,0],p[:,0])), mean_absolute_error(y[:,0],p[:,0]), r2_score(y[:,0],p[:,0]))
