(* Theorem 1, part (D): balanced-bucket achievability.  Partition [n] into M
   buckets of size at most ceil(n/M) = (n + M - 1) %/ M, report the bucket
   Y = bucket(J_star), probe the reported bucket block by block in the order
   of a ranking r of the blocks (any injective r : block -> nat), and stop
   when the flag clears.  Then Z = min(position, kappa) and, for EVERY
   ranking, E[Z] <= (ceil(n/M) - 1)/2 < n / (2M); so also on average over a
   random ranking, in particular the paper's uniformly random order inside
   the bucket (the ranking u(i) of a uniformly random permutation u).  Index
   order (r = id) is one instance.  And I(J*; Y) = H(Y) <= log2 M. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq div.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Lemma INR_card (T : finType) (A : {set T}) :
  INR #|A| = \sum_i (if i \in A then 1 else 0).
Proof. by rewrite -big_mkcond /= sumR_const Rmult_1_r. Qed.

(* Entropy of a point mass is 0. *)
Lemma H_point (T : finType) (q : T -> R) (t : T) :
  (forall i, q i = if i == t then 1 else 0) -> H q = 0.
Proof.
move=> e; rewrite /H big1; first lra.
by move=> i _; rewrite e; case: eqP => _; rewrite ?log2_1; ring.
Qed.

(* If the second coordinate is a function of the first, I(A; B) = H(B). *)
Lemma MI_deterministic (A B : finType) (p : A -> B -> R) (f : A -> B) :
  is_joint p -> (forall a b, b != f a -> p a b = 0) -> MI p = H (marg2 p).
Proof.
move=> pj det.
have c0 : condH (swap p) = 0.
  rewrite /condH big1 // => a _.
  case: (Req_dec (marg2 (swap p) a) 0) => [->|nz]; first ring.
  rewrite (@H_point _ _ (f a)); first ring.
  move=> b; rewrite /post /swap; case: eqP => [->|ne].
    have -> : marg2 (swap p) a = p a (f a).
      rewrite /marg2 /swap (bigD1 (f a)) //= big1 ?Rplus_0_r // => b' nb.
      by apply: det.
    by field; move: nz; rewrite /marg2 /swap (bigD1 (f a)) //= big1 ?Rplus_0_r // => b' nb; apply: det.
  by rewrite det ?(introN eqP ne) // /Rdiv Rmult_0_l.
have h1 := chain_rule pj.
have h2 := chain_rule (swap_joint pj).
rewrite Hjoint_swap in h2.
rewrite /MI; have -> : H (marg1 p) = H (marg2 (swap p)) by apply: H_ext.
lra.
Qed.

Section Buckets.
Variables n M kappa : nat.
Hypothesis n_pos : (0 < n)%N.
Hypothesis M_pos : (0 < M)%N.
Variable bucket : 'I_n -> 'I_M.

Definition bsize (c : 'I_M) := #|[set j | bucket j == c]|.

(* Balanced: every bucket has at most ceil(n/M) = (n + M - 1) %/ M blocks. *)
Hypothesis balanced : forall c, (bsize c <= (n + M - 1) %/ M)%N.

(* J* uniform, Y = bucket(J_star). *)
Definition pJYb (j : 'I_n) (c : 'I_M) : R := if bucket j == c then / INR n else 0.

(* 0-based position of block j when its bucket is probed in the order of the
   ranking r (block i before block j iff r i < r j). *)
Definition posr (r : 'I_n -> nat) (j : 'I_n) :=
  #|[set i | (bucket i == bucket j) && (r i < r j)%N]|.

(* ... and in index order (r = id). *)
Definition posb (j : 'I_n) := #|[set i | (bucket i == bucket j) && (i < j)%N]|.

(* E[Z] with Z = min(tau - 1, kappa), for the ranking r and for index order. *)
Definition EZr (r : 'I_n -> nat) := \sum_j / INR n * INR (minn (posr r j) kappa).
Definition EZb := \sum_j / INR n * INR (minn (posb j) kappa).

Lemma EZb_EZr : EZb = EZr (@nat_of_ord n).
Proof. by []. Qed.

Let nR : 0 < INR n.
Proof. by apply: lt_0_INR; apply/ltP. Qed.
Let MR : 0 < INR M.
Proof. by apply: lt_0_INR; apply/ltP. Qed.

Lemma pJYb_joint : is_joint pJYb.
Proof.
split=> [j c|]; first by rewrite /pJYb; case: eqP => _; [left; apply: Rinv_0_lt_compat | lra].
rewrite (eq_bigr (fun _ => / INR n)); last by move=> j _; rewrite /pJYb sumR_delta'.
by rewrite sumR_constT card_ord Rinv_r //; lra.
Qed.

Lemma pJYb_uniform j : marg1 pJYb j = / INR n.
Proof. by rewrite /marg1 /pJYb sumR_delta'. Qed.

(* Rate: I(J*; Y) = H(Y) <= log2 M. *)
Theorem bucket_rate : MI pJYb = H (marg2 pJYb) /\ H (marg2 pJYb) <= log2 (INR M).
Proof.
split; first apply: (MI_deterministic (f := bucket) pJYb_joint).
  by move=> j c; rewrite /pJYb eq_sym => /negbTE ->.
have := H_le_log_card (marg2_dist pJYb_joint); by rewrite card_ord.
Qed.

Section Ranking.
Variable r : 'I_n -> nat.
Hypothesis r_inj : injective r.

Let S := \sum_j \sum_i (if (bucket i == bucket j) && (r i < r j)%N then 1 else 0).

Lemma sum_pos : \sum_j INR (posr r j) = S.
Proof. by apply: eq_bigr => j _; rewrite INR_card; apply: eq_bigr => i _; rewrite inE. Qed.

Lemma twice_S : 2 * S = \sum_j (INR (bsize (bucket j)) - 1).
Proof.
have sym : S = \sum_j \sum_i (if (bucket i == bucket j) && (r j < r i)%N then 1 else 0).
  rewrite /S exchange_big /=; apply: eq_bigr => j _; apply: eq_bigr => i _.
  by rewrite eq_sym.
have -> : 2 * S = S + S by ring.
rewrite {2}sym -big_split /=; apply: eq_bigr => j _.
rewrite -big_split /= /bsize INR_card.
rewrite (bigD1 j) //= [in RHS](bigD1 j) //= !inE eqxx ltnn /=.
have aux : forall x y : R, x = y -> 0 + 0 + x = 1 + y - 1 by move=> x y ->; ring.
apply: aux; apply: eq_bigr => i ij; rewrite inE.
case: (bucket i == bucket j) => //=; last ring.
case: (ltngtP (r i) (r j)) => h; try ring.
by move: ij; rewrite (r_inj h) eqxx.
Qed.

(* Part (D) for the ranking r: E[Z] <= (ceil(n/M) - 1)/2 < n / (2M). *)
Theorem bucket_EZr_le : EZr r <= (INR ((n + M - 1) %/ M) - 1) / 2.
Proof.
set b := ((n + M - 1) %/ M)%N.
have step1 : EZr r <= / INR n * \sum_j INR (posr r j).
  rewrite /EZr -sumR_scal; apply: leR_sum => j _.
  apply: Rmult_le_compat_l; first by left; apply: Rinv_0_lt_compat.
  by apply: le_INR; apply/leP; rewrite geq_minl.
have step2 : \sum_j INR (posr r j) <= INR n * (INR b - 1) / 2.
  rewrite sum_pos.
  have : \sum_j (INR (bsize (bucket j)) - 1) <= \sum_(j : 'I_n) (INR b - 1).
    apply: leR_sum => j _; have := balanced (bucket j) => /leP/le_INR; rewrite -/b; lra.
  rewrite sumR_constT card_ord -twice_S; lra.
apply: (Rle_trans _ _ _ step1).
apply: (Rle_trans _ (/ INR n * (INR n * (INR b - 1) / 2))).
  by apply: Rmult_le_compat_l => //; left; apply: Rinv_0_lt_compat.
have -> : / INR n * (INR n * (INR b - 1) / 2) = (INR b - 1) / 2 by field; lra.
exact: Rle_refl.
Qed.

End Ranking.

Lemma ceil_bound : (INR ((n + M - 1) %/ M) - 1) / 2 < INR n / (2 * INR M).
Proof.
set b := ((n + M - 1) %/ M)%N.
have bM : INR b * INR M <= INR n + INR M - 1.
  have h : (b * M <= n + M - 1)%N by apply: leq_trunc_div.
  have h' : INR (b * M) <= INR (n + M - 1) by apply: le_INR; apply/leP.
  rewrite mult_INR in h'.
  have e : INR (n + M - 1) = INR n + INR M - 1.
    by rewrite minus_INR ?plus_INR //; apply/leP; rewrite addn_gt0 M_pos orbT.
  lra.
have step3 : INR b - 1 < INR n / INR M.
  apply: (Rmult_lt_reg_r (INR M)) => //.
  by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
have -> : INR n / (2 * INR M) = (INR n / INR M) / 2 by field; lra.
lra.
Qed.

Theorem bucket_EZr (r : 'I_n -> nat) : injective r -> EZr r < INR n / (2 * INR M).
Proof. by move=> ri; apply: (Rle_lt_trans _ _ _ (bucket_EZr_le ri)); exact: ceil_bound. Qed.

(* Part (D) in index order: E[Z] < n / (2M). *)
Theorem bucket_EZ : EZb < INR n / (2 * INR M).
Proof. by rewrite EZb_EZr; apply: bucket_EZr => a b; exact: ord_inj. Qed.

(* Part (D) with a random ranking: U with any law pU, the ranking r u
   injective for every u (e.g. u a uniformly random permutation, r u i = u(i)):
   E[Z] = sum_u pU(u) E[Z | U = u] < n / (2M). *)
Theorem bucket_EZ_random (TU : finType) (pU : TU -> R) (r : TU -> 'I_n -> nat) :
  is_dist pU -> (forall u, injective (r u)) ->
  \sum_u pU u * EZr (r u) < INR n / (2 * INR M).
Proof.
move=> pu ri.
set c := (INR ((n + M - 1) %/ M) - 1) / 2.
apply: (Rle_lt_trans _ c); last exact: ceil_bound.
have -> : c = (\sum_u pU u) * c by rewrite pu.2; ring.
rewrite -sumR_scar.
apply: leR_sum => u _; apply: Rmult_le_compat_l; first exact: pu.1.
exact: bucket_EZr_le.
Qed.

End Buckets.

(* A balanced partition exists for every 1 <= M <= n: consecutive runs of
   b = ceil(n/M) blocks, bucket(j) = j %/ b. *)
Section Balanced.
Variables n M : nat.
Hypothesis M_pos : (0 < M)%N.
Hypothesis M_le_n : (M <= n)%N.

Let b := ((n + M - 1) %/ M)%N.

Lemma bal_b_pos : (0 < b)%N.
Proof.
rewrite /b leq_divRL // mul1n -addnBA //.
by rewrite (leq_trans M_le_n) // leq_addr.
Qed.

Lemma bal_n_le : (n <= b * M)%N.
Proof.
have h := ltn_ceil (n + M - 1) M_pos; rewrite -/b mulSn -addnBA // in h.
have e : (M + b * M = (M - 1) + (b * M).+1)%N by rewrite addnS -addSn subn1 prednK.
by rewrite e [(n + _)%N]addnC ltn_add2l ltnS in h.
Qed.

Lemma bal_lt (j : 'I_n) : (j %/ b < M)%N.
Proof. by rewrite ltn_divLR ?bal_b_pos // (leq_trans (ltn_ord j)) // mulnC bal_n_le. Qed.

Definition bal_bucket (j : 'I_n) : 'I_M := Ordinal (bal_lt j).

Lemma bal_bucket_balanced c :
  (#|[set j | bal_bucket j == c]| <= (n + M - 1) %/ M)%N.
Proof.
set A := [set j | bal_bucket j == c].
pose f (j : 'I_n) : 'I_b := Ordinal (ltn_pmod j bal_b_pos).
have inj : {in A &, injective f}.
  move=> j1 j2; rewrite !inE => /eqP h1 /eqP h2 /(congr1 val) /= hm.
  have q1 : (j1 %/ b = c)%N by rewrite -h1.
  have q2 : (j2 %/ b = c)%N by rewrite -h2.
  by apply: val_inj; rewrite /= (divn_eq j1 b) (divn_eq j2 b) q1 q2 hm.
rewrite -(card_in_imset inj) -/b.
by apply: leq_trans (max_card _) _; rewrite card_ord.
Qed.

End Balanced.

(* Part (D) for every 1 <= M <= n: some balanced M-bucket interface has
   E[Z] < n/(2M) and I(J*; Y) = H(Y) <= log2 M. *)
Theorem buckets_exist (n M kappa : nat) :
  (0 < M)%N -> (M <= n)%N ->
  exists bucket : 'I_n -> 'I_M,
    (forall c, (#|[set j | bucket j == c]| <= (n + M - 1) %/ M)%N) /\
    (EZb kappa bucket < INR n / (2 * INR M)) /\
    (MI (pJYb bucket) <= log2 (INR M)).
Proof.
move=> M0 Mn; have n0 : (0 < n)%N by apply: leq_trans Mn.
exists (bal_bucket M0 Mn); split; first exact: bal_bucket_balanced.
split; first exact: (bucket_EZ kappa n0 M0 (bal_bucket_balanced M0 Mn)).
by have [-> h] := bucket_rate n0 (bal_bucket M0 Mn).
Qed.
