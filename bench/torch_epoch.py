"""The PyTorch side of bench/epoch: one bare training epoch of the MLP 784-256-128-10 on
Fashion-MNIST, on one thread, with what scenarios/central-mlp.ini asks of hetsim (batch
64, SGD momentum 0.9, lr 0.05, a fresh shuffle, the last batch partial).

Loading the data, building the model and evaluating are NOT timed: only the loop (next
batch -> forward -> zero grad -> backward -> step). Prints the loop's wall seconds, one
line per repetition.

Usage: python3 bench/torch_epoch.py DATA_DIR REPETITIONS"""
import gzip
import sys
import time

import numpy as np
import torch


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def main():
    data, repetitions = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    torch.manual_seed(1)
    x = torch.from_numpy(read_idx(f"{data}/train-images-idx3-ubyte.gz", 16).reshape(-1, 784).astype(np.float32) / 255)
    y = torch.from_numpy(read_idx(f"{data}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    batch = 64
    for _ in range(repetitions):
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                    torch.nn.ReLU(), torch.nn.Linear(128, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        start = time.perf_counter()
        order = torch.randperm(x.shape[0])
        for at in range(0, x.shape[0], batch):
            rows = order[at:at + batch]
            loss = loss_fn(model(x[rows]), y[rows])
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
        print(f"{time.perf_counter() - start:.6f}", flush=True)


if __name__ == "__main__":
    main()
