# pyquiet.py STOPFILE: Python threads that call nanosleep, poll and
# epoll_wait through ctypes (no retry on EINTR, unlike Python's own calls)
# in 1-second loops until STOPFILE exists; prints "calls N early N" (early:
# a call that did not return its timeout's 0).
import ctypes, ctypes.util, threading, time, os, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
class TS(ctypes.Structure): _fields_=[("s",ctypes.c_long),("ns",ctypes.c_long)]
bad = [0]; calls=[0]; stop=False
def sleeper():
    while not stop:
        ts=TS(1,0); r=libc.nanosleep(ctypes.byref(ts),None); calls[0]+=1
        if r!=0: bad[0]+=1
def poller():
    while not stop:
        r=libc.poll(None,0,1000); calls[0]+=1
        if r!=0: bad[0]+=1
def epoller():
    ep=libc.epoll_create1(0); buf=ctypes.create_string_buffer(64)
    while not stop:
        r=libc.epoll_wait(ep,buf,1,1000); calls[0]+=1
        if r!=0: bad[0]+=1
ts=[threading.Thread(target=f) for f in (sleeper,poller,epoller)]
[t.start() for t in ts]
print("ready", flush=True)
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
stop=True; [t.join() for t in ts]
print("calls", calls[0], "early", bad[0], flush=True)
