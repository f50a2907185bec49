// numpy arrays <-> the fp16 tensors of a run: inputs of float32 or float16 rounded as a .npy input is (the session
// checks their names and shapes against the model), outputs handed back as float16 without a copy or widened to
// float32.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "ldmsim/session/session.hpp"

namespace ldmsim::python {

/// `inputs` (a dict of input name -> float32 or float16 array) as a run's input values, rounded to fp16 to nearest
/// even; TypeError naming an input of another dtype.
std::map<std::string, TensorValues> input_tensors(const pybind11::handle& inputs);

/// A run's output as a float16 array sharing its values, or a float32 copy.
pybind11::array to_numpy(const TensorValues& tensor, bool as_float16);

}  // namespace ldmsim::python
