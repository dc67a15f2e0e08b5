"""PyTorch programs run on an XLA device, for tests/torch/test_torch_xla.py.

`python programs.py NAME` runs program NAME on the device PJRT_DEVICE selects
(KILN or CPU) and prints its results as JSON on the last line of stdout:
torch_xla picks its device type once per process, so the test runs each
program twice in subprocesses and compares the two outputs.
"""
import json
import os
import sys
import tempfile

import torch
import torch_xla
import torch_xla.core.xla_model as xm

PROGRAMS = {}


def program(function):
  PROGRAMS[function.__name__] = function
  return function


def values(tensor):
  return tensor.detach().cpu().double().flatten().tolist()


@program
def smoke(device):
  a = torch.arange(6, dtype=torch.float32, device=device).reshape(2, 3)
  b = torch.ones(3, 2, device=device)
  return {"result": values(a @ b + 1)}


@program
def devices(device):
  return {"count": len(torch_xla.devices()), "kind": str(device.type)}


@program
def elementwise(device):
  torch.manual_seed(0)
  x = torch.randn(4, 5).to(device)
  y = torch.randn(4, 5).to(device)
  out = torch.tanh(x) * torch.exp(-y.abs()) + torch.maximum(x, y) - x / (1 + y * y)
  out2 = torch.sigmoid(x) + torch.nn.functional.gelu(y) + torch.sqrt(x.abs()) + torch.floor(y)
  out3 = torch.where(x > y, x, y * 2) + (x <= y).float() + x.clamp(-0.5, 0.5)
  return {"a": values(out), "b": values(out2), "c": values(out3)}


@program
def matmul_reductions(device):
  torch.manual_seed(1)
  a = torch.randn(16, 32).to(device)
  b = torch.randn(32, 8).to(device)
  c = torch.randn(3, 16, 32).to(device)
  m = a @ b
  return {"mm": values(m), "bmm": values(c @ b), "sum0": values(m.sum(0)),
          "max1": values(m.max(1).values), "argmax": values(m.argmax(1)), "mean": values(m.mean()),
          "softmax": values(torch.softmax(m, -1)), "norm": values(torch.linalg.norm(a, dim=1))}


@program
def indexing(device):
  torch.manual_seed(2)
  table = torch.randn(10, 4).to(device)
  idx = torch.tensor([3, 0, 7, 3], device=device)
  rows = table[idx]
  grad = torch.zeros(10, 4, device=device).index_add(0, idx, rows * 2)
  sliced = table[1:9:2, ::2]
  cat = torch.cat([table[:2], table[-2:]], 0)
  emb = torch.nn.functional.embedding(idx, table)
  gathered = torch.gather(table, 1, torch.tensor([[0, 1]] * 10, device=device))
  masked = table.masked_fill(table > 0.5, -1.0)
  return {"rows": values(rows), "grad": values(grad), "sliced": values(sliced),
          "cat": values(cat), "emb": values(emb), "gathered": values(gathered),
          "masked": values(masked)}


@program
def second_device(device):
  # A program placed on device 1 of 2: torch_xla compiles it for one device
  # and runs it there (PJRT execute_device).
  other = torch_xla.device(1)
  a = torch.arange(6.0, device=other).reshape(2, 3)
  b = (a * 2 + 1).sum(0)
  c = (torch.ones(3, device=device) + 1).to(other) + b
  return {"b": values(b), "c": values(c), "where": str(c.device)}


@program
def random(device):
  # torch_xla's generator is rng-bit-generator (XLA's default, Philox on
  # the CPU), which Kiln computes bit for bit.
  torch.manual_seed(5)
  u = torch.rand(3, 4, device=device)
  n = torch.randn(5, device=device)
  d = torch.nn.functional.dropout(torch.ones(4, 4, device=device), 0.5, training=True)
  return {"uniform": values(u), "normal": values(n), "dropout": values(d)}


@program
def unsupported_op(device):
  # A TPU kernel: a custom call neither Kiln nor XLA's CPU client runs.
  x = torch.ones(8, dtype=torch.int32, device=device)
  (y,) = torch_xla._XLAC._xla_tpu_custom_call([x], "payload", [[8]], [torch.int32])
  return {"y": values(y)}


def train(model, data, target, loss_fn, device, steps=20, lr=0.05):
  model = model.to(device)
  optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
  losses = []
  for _ in range(steps):
    optimizer.zero_grad()
    loss = loss_fn(model(data), target)
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    losses.append(loss.item())
  return losses


@program
def mlp_training(device):
  torch.manual_seed(3)
  model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
                              torch.nn.Tanh(), torch.nn.Linear(32, 3))
  data = torch.randn(64, 8).to(device)
  target = torch.randint(0, 3, (64,)).to(device)
  return {"losses": train(model, data, target, torch.nn.functional.cross_entropy, device)}


@program
def cnn_training(device):
  torch.manual_seed(4)
  model = torch.nn.Sequential(
      torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
      torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
      torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 5))
  data = torch.randn(8, 3, 16, 16).to(device)
  target = torch.randint(0, 5, (8,)).to(device)
  return {"losses": train(model, data, target, torch.nn.functional.cross_entropy, device,
                          lr=0.02)}


@program
def transformer_training(device):
  torch.manual_seed(6)
  model = torch.nn.Sequential(
      torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0,
                                       batch_first=True),
      torch.nn.Flatten(), torch.nn.Linear(16 * 6, 4))
  data = torch.randn(8, 6, 16).to(device)
  target = torch.randint(0, 4, (8,)).to(device)
  return {"losses": train(model, data, target, torch.nn.functional.cross_entropy, device,
                          steps=10, lr=0.01)}


@program
def memory_info(device):
  x = torch.ones(1024, 1024, device=device)
  torch_xla.sync()
  info = xm.get_memory_info(device)
  return {"keys": sorted(info), "positive": all(v >= 0 for v in info.values()),
          "limit_positive": info.get("bytes_limit", 0) > 0, "x": values(x.sum())}


@program
def persistent_cache(device):
  # Compiling with XLA_PERSISTENT_CACHE_PATH set (by the caller) serializes
  # each executable into the cache directory.
  x = torch.arange(8.0, device=device)
  y = (x * 3 + 1).sum()
  torch_xla.sync()
  path = os.environ["XLA_PERSISTENT_CACHE_PATH"]
  return {"y": values(y), "cached_files": len(os.listdir(path)) > 0}


# SPMD mode (`xr.use_spmd()`, set before the first device use): one program
# over every device, sharded by `xs.mark_sharding`. torch_xla compiles it
# with num_partitions = device count, shardings on the HLO parameters and
# `Sharding` custom calls, and sends each device its shard, zero-padded where
# the shards are uneven; it reads each result's sharding from the optimized
# module's spmd_output_sharding.
SPMD_PROGRAMS = set()


def spmd_program(function):
  SPMD_PROGRAMS.add(function.__name__)
  return program(function)


def mesh(shape, names):
  import numpy as np
  import torch_xla.distributed.spmd as xs
  import torch_xla.runtime as xr
  return xs.Mesh(np.arange(xr.global_runtime_device_count()), shape, names)


def mark(tensor, device_mesh, spec):
  import torch_xla.distributed.spmd as xs
  xs.mark_sharding(tensor, device_mesh, spec)
  return tensor


def shard_shapes(tensor):
  """Each device's buffer of `tensor` (padded shards as they are held)."""
  torch_xla.sync()
  xm.wait_device_ops()
  return [list(shard.shape) for shard, _ in torch_xla._XLAC._get_local_shards([tensor])[0]]


@spmd_program
def spmd_data_parallel(device):
  # Rows over 4 devices; the weight whole on each.
  torch.manual_seed(7)
  m = mesh((4, 1), ("data", "model"))
  x = mark(torch.randn(32, 8).to(device), m, ("data", None))
  w = torch.randn(8, 16).to(device)
  y = torch.relu(x @ w)
  total = y.sum(1)
  return {"y": values(y), "total": values(total), "y_shards": shard_shapes(y)}


@spmd_program
def spmd_tensor_parallel(device):
  # Megatron: the first weight split by columns, the second by rows, on a
  # 2 x 2 mesh whose other axis splits the batch.
  torch.manual_seed(8)
  m = mesh((2, 2), ("data", "model"))
  x = mark(torch.randn(16, 8).to(device), m, ("data", None))
  w1 = mark(torch.randn(8, 32).to(device), m, (None, "model"))
  w2 = mark(torch.randn(32, 8).to(device), m, ("model", None))
  h = torch.nn.functional.gelu(x @ w1)
  out = h @ w2
  return {"h": values(h), "out": values(out), "h_shards": shard_shapes(h),
          "out_shards": shard_shapes(out)}


@spmd_program
def spmd_uneven(device):
  # 10 rows over 4 devices: shards of 3, 3, 3 and 1 rows, each sent padded
  # to 3; a result split alike comes back padded too.
  m = mesh((4,), ("data",))
  x = mark((torch.arange(40, dtype=torch.float32).reshape(10, 4) / 10).to(device), m,
           ("data", None))
  rows = (torch.sin(x) * 2).sum(1)
  shifted = torch.sin(x) + 1
  return {"rows": values(rows), "shifted": values(shifted), "x_shards": shard_shapes(x),
          "shifted_shards": shard_shapes(shifted)}


@spmd_program
def spmd_constraint(device):
  # mark_sharding on a value the program computes: a `Sharding` custom call.
  torch.manual_seed(9)
  m = mesh((2, 2), ("data", "model"))
  x = torch.randn(8, 12).to(device)
  h = mark(torch.exp(x) * 2, m, (None, "model"))
  out = h.sum(0) + 1
  return {"out": values(out), "h_shards": shard_shapes(h)}


@spmd_program
def spmd_cnn(device):
  # Convolutions and batch norm with the batch split over 4 devices, 3 SGD
  # steps (with momentum, as train() does): the weights' gradients are
  # partial sums over the batch.
  torch.manual_seed(12)
  m = mesh((4,), ("data",))
  model = torch.nn.Sequential(
      torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
      torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
      torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).to(device)
  data = mark(torch.randn(8, 3, 16, 16).to(device), m, ("data", None, None, None))
  target = torch.randint(0, 5, (8,)).to(device)
  losses = train(model, data, target, torch.nn.functional.cross_entropy, device, steps=3,
                 lr=0.05)
  features = model[:3](data)
  return {"losses": losses, "conv": values(model[0].weight),
          "features_shards": shard_shapes(features)}


@spmd_program
def spmd_training(device):
  # FSDP-style: every weight split by rows over the 4 devices, the batch
  # too; 5 SGD steps.
  torch.manual_seed(10)
  m = mesh((4,), ("data",))
  model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 4)).to(device)
  for layer in (model[0], model[2]):
    mark(layer.weight, m, ("data", None))
  data = mark(torch.randn(32, 8).to(device), m, ("data", None))
  target = torch.randint(0, 4, (32,)).to(device)
  losses = train(model, data, target, torch.nn.functional.cross_entropy, device, steps=5, lr=0.1)
  return {"losses": losses, "weight": values(model[0].weight),
          "weight_shards": shard_shapes(model[0].weight)}


def main():
  name = sys.argv[1]
  if os.environ.get("PJRT_DEVICE") == "KILN" and os.environ.get("KILN_REGISTER_BY_HAND"):
    from torch_xla.experimental import plugins
    from kiln_pjrt.torch_plugin import KilnPlugin
    plugins.register_plugin("KILN", KilnPlugin())
  if name in SPMD_PROGRAMS:
    import torch_xla.runtime as xr
    xr.use_spmd()
  device = torch_xla.device()
  print(json.dumps(PROGRAMS[name](device)))


if __name__ == "__main__":
  main()
