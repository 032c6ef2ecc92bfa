"""A program laid out as JAXBench's 7p is, written for kbench's tests: module-level scenario
constants, one derived from another at import time, read by workload()."""
import jax.numpy as jnp

CONFIG = {'name': 'test_scenario', 'max_num_batched_tokens': 4096, 'head_dim': 128}
ACTIVE_Q_LENS = (1,) * 48 + (512,) * 7 + (464,)
NUM_ACTIVE_SEQS = len(ACTIVE_Q_LENS)


def workload(queries):
    limit = 1.0 / CONFIG['head_dim']
    return queries * limit * NUM_ACTIVE_SEQS
