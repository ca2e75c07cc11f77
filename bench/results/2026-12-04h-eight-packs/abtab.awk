/^### /{split($2,a,":"); l=a[1]; sub(/-[AB]$/,"",l); v=substr(a[1],length(a[1])); next}
/^# (all_reduce|all_gather|reduce_scatter|broadcast|sendrecv|alltoall)$/{c=$2; next}
$1 ~ /^[0-9]+$/ { k=l" "c" "$1; if(v=="A") A[k]=A[k]" "(l=="lat"?$6:$8); else B[k]=B[k]" "(l=="lat"?$6:$8); keys[k]=1 }
END{for(k in keys) print k, "| A:" A[k], "| B:" B[k]}
