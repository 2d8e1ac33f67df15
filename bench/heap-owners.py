#!/usr/bin/env python3
"""Split a Go heap profile's live bytes by owner (netpoll, hertz, the
gateway's per-request objects, pools), for "where each KiB of an open
stream goes" (docs/benchmarks-analysis.md, issue 22).

    go tool pprof -sample_index=inuse_space -traces bench/.bin/sluice HEAP.pprof > t.txt
    python3 bench/heap-owners.py t.txt

Each sample goes to the first rule whose test matches its stack (leaf
first). Take the profile with GODEBUG=memprofilerate=512 in the rig's
environment, or the sampling makes small owners noise.
"""
import sys, re, collections
def parse(path):
    out=[]; cur=None
    for line in open(path):
        if line.startswith('-----------+'):
            if cur: out.append(cur)
            cur=None; continue
        m=re.match(r'\s*([\d.]+)(kB|MB|B|GB)?\s+(\S.*)$', line)
        if m and cur is None and re.match(r'\s*[\d.]+(kB|MB|B|GB)?\s{2,}', line):
            v=float(m.group(1)); u=m.group(2) or 'B'
            v*= {'B':1,'kB':1024,'MB':1024*1024,'GB':1<<30}[u]
            cur=[v,[m.group(3).strip()]]
        elif cur is not None:
            cur[1].append(line.strip())
    if cur: out.append(cur)
    return out
rules=[
 ('profiler (runtime/pprof, not per stream)', lambda s: any('runtime/pprof' in f for f in s[:3])),
 ('netpoll: output barrier, 1 per connection', lambda s: any('netpoll.init.func1' == f.split(' ')[0].split('/')[-1] or f.endswith('netpoll.init.func1') for f in s[:2])),
 ('netpoll: poller event args (per poller)', lambda s: 'pollArgs' in s[0]),
 ('netpoll: input node made with the connection', lambda s: any('newLinkBufferNode' in f for f in s[:8]) and any('NewLinkBuffer' in f and 'Node' not in f for f in s[:10])),
 ('netpoll: input nodes booked by reads', lambda s: any('newLinkBufferNode' in f for f in s[:8]) and any('book' in f for f in s[:10])),
 ('netpoll: other nodes', lambda s: any('newLinkBufferNode' in f or 'mcache' in f for f in s[:8])),
 ('request body buffers (getBody)', lambda s: any('getBody' in f for f in s[:3])),
 ('relay buffers (streamBufPool, 8 KiB)', lambda s: any('worker.init.func4' in f or 'proxy.init.func4' in f for f in s[:2])),
 ('upstream conn bufio.Reader (1 KiB)', lambda s: 'bufio.NewReaderSize' in s[0]),
 ('http.Response + header map (upstream)', lambda s: any(k in f for f in s[:10] for k in ('net/http.ReadResponse','textproto','net/http.readTransfer'))),
 ('hertz RequestContext', lambda s: 'app.NewContext' in s[0]),
 ('hertz headers/args', lambda s: 'cloudwego/hertz' in s[0]),
 ('netpoll: connection objects', lambda s: 'cloudwego/netpoll' in s[0] or 'gopool' in s[0]),
 ('context (cancel, AfterFunc)', lambda s: s[0].startswith('context.')),
 ('timers', lambda s: s[0].startswith('time.')),
 ('exchange (serve)', lambda s: s[0].endswith(('worker.(*gateway).serve', 'proxy.(*Gateway).serve'))),
 ('usage record (beginRecord)', lambda s: 'beginRecord' in s[0]),
 ('relayStream closure/locals', lambda s: 'relayStream' in s[0]),
 ('chunkWriter', lambda s: 'newChunkWriter' in s[0]),
 ('upstream conn (pool, struct)', lambda s: ('worker/upstream' in s[0] or 'proxy/upstream' in s[0])),
 ('conn tracker', lambda s: 'connTracker' in s[0]),
 ('runtime.mallocgc (unattributed leaf)', lambda s: s[0]=='runtime.mallocgc'),
]
for path in sys.argv[1:]:
    tr=parse(path); tot=collections.Counter(); ex=collections.defaultdict(collections.Counter)
    for v,s in tr:
        for name,f in rules:
            try: ok=f(s)
            except Exception: ok=False
            if ok: tot[name]+=v; break
        else:
            tot['other']+=v; ex['other'][s[0]]+=v
    T=sum(tot.values())
    print('==',path,'total %.1f MiB'%(T/2**20))
    for k,v in tot.most_common(): print('%-48s %8.0f KiB'%(k,v/1024))
    print(' other top:', [(k,int(v/1024)) for k,v in ex['other'].most_common(12)])
