# The orders small-m2.sh times per table (and its prebuild stages): every order of the targets for
# the shipped tables; for each candidate the orders whose entries it replaces.
M2_ALL=4,8,12,16,24,32,48,64,80,100,128
declare -A M2_ORDERS=([lean]=12,16,24,32,48,64,80,100,128 [lean-u]=48,64 [lean16]=64,80,128 [lean128]=48,64,80,100,128)
