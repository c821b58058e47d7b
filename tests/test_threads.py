"""The thread policy (issue 23): one thread for small work or when no core is free; never above the caller's cap."""

import torch

from theorylab.threads import LARGE, busy_elsewhere, one_thread, run_threads, threads_for


def test_small_work_runs_on_one_thread_whatever_the_cores():
    assert run_threads(LARGE - 1, cores=16, busy=0.0) == 1


def test_large_work_takes_the_free_cores_up_to_the_cap():
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert run_threads(LARGE, cores=2, busy=0.0) == 2
        assert run_threads(LARGE, cores=2, busy=0.7) == 1  # a core mostly busy elsewhere is not free
        assert run_threads(LARGE, cores=2, busy=0.3) == 2  # a blip of background work does not count
        assert run_threads(LARGE, cores=2, busy=1.0) == 1
        assert run_threads(LARGE, cores=2, busy=3.0) == 1  # never fewer than one
        assert run_threads(LARGE, cores=16, busy=0.0) == 2  # the cap
        torch.set_num_threads(1)
        assert run_threads(LARGE, cores=16, busy=0.0) == 1  # one_thread / a dask worker's plan is respected
    finally:
        torch.set_num_threads(previous)


def test_threads_for_restores_the_count_and_one_thread_caps_it():
    previous = torch.get_num_threads()

    @one_thread
    def inside(ctx):
        with threads_for(10 * LARGE) as chosen:
            return chosen, torch.get_num_threads()

    assert inside(None) == (1, 1)
    assert torch.get_num_threads() == previous
    assert busy_elsewhere() >= 0.0
