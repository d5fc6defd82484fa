"""The PyTorch side of bench/epoch, on one thread, timing only the bare training loop
(next batch -> forward -> zero grad -> backward -> step); loading the data, building the
model and evaluating are NOT timed. Prints, per repetition, the loop's wall seconds and
its CPU seconds (process time; one thread, so the loop's).

  mlp (default): one epoch of the MLP 784-256-128-10 on Fashion-MNIST with what
      scenarios/central-mlp.ini asks of hetsim (batch 64, SGD momentum 0.9, lr 0.05, a
      fresh shuffle, the last batch partial).
  cnn: the CNN (conv 32 then 64 channels, kernel 5, 2x2 max-pool after each, hidden 128)
      over 8 shares of 1,000 images, batches of 64 within each share (the last of 40),
      128 steps: what one round of 8 local-SGD agents with 1,000 images each trains in
      bench/epoch's CNN run (SGD momentum 0.9, lr 0.05, as scenarios/central-cnn.ini).

Usage: python3 bench/torch_epoch.py DATA_DIR REPETITIONS [mlp|cnn]"""
import gzip
import sys
import time

import numpy as np
import torch


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, 10))


def cnn():
    return torch.nn.Sequential(torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(3136, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


def batches(kind, order, batch):
    """Row index tensors of the batches, in training order."""
    if kind == "mlp":
        return [order[at:at + batch] for at in range(0, order.shape[0], batch)]
    share = 1000
    return [order[a * share + at:a * share + min(at + batch, share)] for a in range(8) for at in range(0, share, batch)]


def main():
    data, repetitions = sys.argv[1], int(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "mlp"
    if kind not in ("mlp", "cnn"):
        sys.exit(f"torch_epoch.py: unknown model '{kind}' (mlp or cnn)")
    torch.set_num_threads(1)
    torch.manual_seed(1)
    shape = (-1, 784) if kind == "mlp" else (-1, 1, 28, 28)
    x = torch.from_numpy(read_idx(f"{data}/train-images-idx3-ubyte.gz", 16).reshape(shape).astype(np.float32) / 255)
    y = torch.from_numpy(read_idx(f"{data}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    batch = 64
    for _ in range(repetitions):
        model = mlp() if kind == "mlp" else cnn()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        start, cpu = time.perf_counter(), time.process_time()
        order = torch.randperm(x.shape[0])
        for rows in batches(kind, order, batch):
            loss = loss_fn(model(x[rows]), y[rows])
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
        print(f"{time.perf_counter() - start:.6f} {time.process_time() - cpu:.6f}", flush=True)


if __name__ == "__main__":
    main()
