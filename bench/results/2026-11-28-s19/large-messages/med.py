import re,sys,statistics as st
cur=None; d={}
first=False
for line in open(sys.argv[1]):
    m=re.match(r"== (\w+) (\d+)",line)
    if m: cur=m.group(1); first=True; continue
    if line.startswith("256K"):
        if first: first=False; continue
        v=re.findall(r"(\d+)K raw (\d+) gma (\d+) ([\d.]+)x",line)
        for size,raw,gma,r in v:
            d.setdefault((cur,size),[]).append((int(raw),int(gma),float(r)))
for k in sorted(d):
    v=d[k]
    print(k, "n=%d raw %.0f gma %.0f ratio median %.2f (range %.2f-%.2f)"%(len(v),st.median(x[0] for x in v),st.median(x[1] for x in v),st.median(x[2] for x in v),min(x[2] for x in v),max(x[2] for x in v)))
