(* Theorem 1 of the paper (information-recovery trade-off), parts B, C, E:
   every n, every kappa with 1 <= kappa and 2 kappa < n (the paper assumes
   2 <= kappa < n/2), every finite interface Y, every private randomness U
   independent of (J*, Y), every (Y,U)-measurable archive order. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy ListFano.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* ------------------------------------------------------------------ *)
(* Arithmetic helpers                                                   *)

Lemma card_set_lt n m : (m <= n)%N -> #|[set k : 'I_n | (k < m)%N]| = m.
Proof.
elim: m => [|m IH] lemn.
  by rewrite (_ : [set k : 'I_n | (k < 0)%N] = set0) ?cards0 //.
have mn : (m < n)%N by [].
have -> : [set k : 'I_n | (k < m.+1)%N] = Ordinal mn |: [set k : 'I_n | (k < m)%N].
  by apply/setP => k; rewrite !inE ltnS leq_eqVlt.
by rewrite cardsU1 inE /= ltnn IH // ltnW.
Qed.

(* min(a, kappa) = sum_{i < kappa} [i < a]: the tail-sum identity. *)
Lemma minn_tail a k : minn a k = (\sum_(i < k) (i < a))%N.
Proof.
elim: k => [|k IH]; first by rewrite big_ord0 minn0.
rewrite big_ord_recr /= -IH.
case: (ltngtP a k) => h.
- have h1 : (a < k.+1)%N by apply: ltnW.
  by rewrite /minn h1 addn0.
- have h1 : (a < k.+1)%N = false by rewrite ltnS leqNgt h.
  by rewrite /minn h1 addn1.
- by rewrite h /minn ltnSn addn0.
Qed.

(* ------------------------------------------------------------------ *)
(* Part B: the reduction to list decoding and the main lower bound.     *)

Section PartB.
Variables n kappa : nat.
Variables TY TU : finType.
Variable pJY : 'I_n -> TY -> R.
Hypothesis pJY_joint : is_joint pJY.
Hypothesis J_uniform : forall j, marg1 pJY j = / INR n.
Variable pU : TU -> R.
Hypothesis pU_dist : is_dist pU.
Hypothesis kappa_ge1 : (1 <= kappa)%N.
Hypothesis kappa_lt : (kappa.*2 < n)%N.

(* The archive order pi(y,u) : position t (0-based) |-> block archived at t. *)
Variable pi : TY -> TU -> 'I_n -> 'I_n.
Hypothesis pi_inj : forall y u, injective (pi y u).

(* tau - 1: the 0-based position of block j in the order pi(y,u). *)
Definition tau0 y u j : 'I_n := invF (@pi_inj y u) j.

(* Z = min(tau - 1, kappa). *)
Definition Z y u j : nat := minn (tau0 y u j) kappa.

Definition w j y u := pJY j y * pU u.

(* E[Z]. *)
Definition EZ := \sum_j \sum_y \sum_u w j y u * INR (Z y u j).

(* P_c(m) = Pr[J* in L_m], L_m = the first m archived blocks. *)
Definition Lm (m : nat) y u := [set j | (tau0 y u j < m)%N].
Definition Pcm (m : nat) :=
  \sum_j \sum_y \sum_u (if j \in Lm m y u then w j y u else 0).

(* nu = log2 ((n - kappa) / kappa). *)
Definition nu := log2 (INR (n - kappa) / INR kappa).

(* I = I(J*; Y). *)
Definition Irate := MI pJY.

Lemma w_ge0 j y u : 0 <= w j y u.
Proof. by apply: Rmult_le_pos; [exact: pJY_joint.1 | exact: pU_dist.1]. Qed.

Lemma sum_w : \sum_j \sum_y \sum_u w j y u = 1.
Proof.
rewrite -pJY_joint.2; apply: eq_bigr => j _; apply: eq_bigr => y _.
by rewrite /w sumR_scal pU_dist.2; ring.
Qed.

Lemma Lm_card m y u : (m <= n)%N -> #|Lm m y u| = m.
Proof.
move=> mn; have tinj : injective (tau0 y u) by apply: (can_inj (f_invF (@pi_inj y u))).
have -> : Lm m y u = tau0 y u @^-1: [set k : 'I_n | (k < m)%N].
  by apply/setP => j; rewrite !inE.
by rewrite card_preimset // card_set_lt.
Qed.

(* (B) Tail sum: E[Z] = sum_{m=1}^{kappa} (1 - P_c(m)). *)
Theorem EZ_tail_sum : EZ = \sum_(1 <= m < kappa.+1) (1 - Pcm m).
Proof.
rewrite /EZ big_add1 /= big_mkord.
have e : forall j y u, w j y u * INR (Z y u j)
            = \sum_(i < kappa) (w j y u - (if j \in Lm i.+1 y u then w j y u else 0)).
  move=> j y u; rewrite /Z minn_tail INR_sum -sumR_scal; apply: eq_bigr => i _.
  rewrite INR_b2n /Lm inE ltnS; case: leqP => _; ring.
rewrite (eq_bigr (fun j => \sum_y \sum_u \sum_(i < kappa)
            (w j y u - (if j \in Lm i.+1 y u then w j y u else 0)))); last first.
  by move=> j _; apply: eq_bigr => y _; apply: eq_bigr => u _; exact: e.
rewrite (eq_bigr (fun j => \sum_(i < kappa) \sum_y \sum_u
            (w j y u - (if j \in Lm i.+1 y u then w j y u else 0)))); last first.
  move=> j _; under eq_bigr => y _ do rewrite exchange_big.
  by rewrite exchange_big.
rewrite exchange_big; apply: eq_bigr => i _.
rewrite /Pcm -sum_w -sumR_sub; apply: eq_bigr => j _.
rewrite -sumR_sub; apply: eq_bigr => y _; by rewrite -sumR_sub.
Qed.

Lemma Pcm_mono m1 m2 : (m1 <= m2)%N -> Pcm m1 <= Pcm m2.
Proof.
move=> le; apply: leR_sum => j _; apply: leR_sum => y _; apply: leR_sum => u _.
rewrite /Lm !inE; have := w_ge0 j y u.
case: ifP => h1; case: ifP => h2 //; try lra.
by move: h2; rewrite (leq_trans h1 le).
Qed.

Lemma kappa_lt_n : (kappa < n)%N.
Proof. by apply: leq_ltn_trans kappa_lt; rewrite -addnn leq_addl. Qed.

Lemma nu_pos : 0 < nu.
Proof.
rewrite /nu -log2_1; apply: log2_lt; first lra.
have kp : 0 < INR kappa by apply: lt_0_INR; apply/ltP.
apply: (Rmult_lt_reg_r (INR kappa)) => //.
rewrite Rmult_1_l /Rdiv Rmult_assoc Rinv_l; last lra.
rewrite Rmult_1_r; apply: lt_INR; apply/ltP.
by rewrite ltn_subRL addnn.
Qed.

(* One-shot list bound: P_c(kappa) <= (Irate + 1) / nu. *)
Lemma Pc_kappa_bound : Pcm kappa <= (Irate + 1) / nu.
Proof.
have hk := kappa_lt_n.
have F := list_fano pJY_joint J_uniform pU_dist (L := Lm kappa)
            (fun y u => Lm_card y u (ltnW hk)) kappa_ge1 hk.
have -> : Pcm kappa = Pc pJY pU (Lm kappa) by [].
set P := Pc pJY pU (Lm kappa) in F *.
have kp : 0 < INR kappa by apply: lt_0_INR; apply/ltP.
have nkp : 0 < INR (n - kappa) by apply: lt_0_INR; apply/ltP; rewrite subn_gt0.
have nle : log2 (INR (n - kappa)) <= log2 (INR n).
  by apply: log2_le => //; apply: le_INR; apply/leP; rewrite leq_subr.
have nuE : nu = log2 (INR (n - kappa)) - log2 (INR kappa) by rewrite /nu log2_div.
have np := nu_pos.
have h : P * nu <= Irate + 1 by rewrite nuE /Irate; lra.
have -> : P = (P * nu) / nu by field; lra.
by apply: Rmult_le_compat_r => //; left; apply: Rinv_0_lt_compat.
Qed.

(* (B) The main bound: E[Z] >= kappa [1 - (Irate + 1)/nu]_+. *)
Theorem EZ_lower_bound : INR kappa * Rmax 0 (1 - (Irate + 1) / nu) <= EZ.
Proof.
have EZ0 : 0 <= EZ.
  apply: sumR_ge0 => j _; apply: sumR_ge0 => y _; apply: sumR_ge0 => u _.
  by apply: Rmult_le_pos; [exact: w_ge0 | exact: pos_INR].
have main : INR kappa * (1 - (Irate + 1) / nu) <= EZ.
  rewrite EZ_tail_sum big_add1 /= big_mkord.
  apply: (Rle_trans _ (\sum_(i < kappa) (1 - (Irate + 1) / nu))).
    by rewrite sumR_constT card_ord; lra.
  apply: leR_sum => i _.
  have := Pcm_mono (ltn_ord i); have := Pc_kappa_bound; lra.
by rewrite /Rmax; case: Rle_dec => _; [exact: main | rewrite Rmult_0_r].
Qed.

(* Z <= kappa, so E[Z] <= kappa: together with the bound,
   |E[Z]/kappa - 1| <= (I+1)/nu, the low-rate endpoint in closed form. *)
Lemma EZ_le_kappa : EZ <= INR kappa.
Proof.
rewrite -[INR kappa]Rmult_1_r -sum_w -sumR_scal.
apply: leR_sum => j _; rewrite -sumR_scal; apply: leR_sum => y _.
rewrite -sumR_scal; apply: leR_sum => u _.
rewrite [X in _ <= X]Rmult_comm; apply: Rmult_le_compat_l; first exact: w_ge0.
by apply: le_INR; apply/leP; rewrite geq_minr.
Qed.

(* (C)(i) low-rate endpoint, quantitatively:
   1 - (I+1)/nu <= E[Z]/kappa <= 1, so E[Z]/kappa -> 1 when (I+1)/nu -> 0. *)
Corollary EZ_low_rate :
  1 - (Irate + 1) / nu <= EZ / INR kappa /\ EZ / INR kappa <= 1.
Proof.
have kp : 0 < INR kappa by apply: lt_0_INR; apply/ltP.
have lb := EZ_lower_bound; have ub := EZ_le_kappa.
have lb' : INR kappa * (1 - (Irate + 1) / nu) <= EZ.
  by apply: Rle_trans lb; apply: Rmult_le_compat_l; [lra | apply: Rmax_r].
split.
  apply: (Rmult_le_reg_r (INR kappa)) => //.
  by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
apply: (Rmult_le_reg_r (INR kappa)) => //.
by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
Qed.

(* ---------------- Part C: corollaries ---------------- *)

(* (ii) Threshold: E[Z] <= delta kappa forces I >= (1 - delta) nu - 1. *)
Corollary threshold delta : EZ <= delta * INR kappa -> (1 - delta) * nu - 1 <= Irate.
Proof.
move=> h; have lb := EZ_lower_bound; have np := nu_pos.
have kp : 0 < INR kappa by apply: lt_0_INR; apply/ltP.
have : INR kappa * (1 - (Irate + 1) / nu) <= delta * INR kappa.
  by apply: Rle_trans h; apply: Rle_trans lb; apply: Rmult_le_compat_l; [lra | apply: Rmax_r].
move=> h2; have h3 : 1 - (Irate + 1) / nu <= delta by nra.
have : (1 - delta) * nu <= ((Irate + 1) / nu) * nu by nra.
by rewrite /Rdiv Rmult_assoc Rinv_l ?Rmult_1_r; lra.
Qed.

(* (iii) Price: E[Z] <= kappa - Delta forces I >= Delta nu / kappa - 1. *)
Corollary price Delta : EZ <= INR kappa - Delta -> Delta * nu / INR kappa - 1 <= Irate.
Proof.
move=> h; have lb := EZ_lower_bound; have np := nu_pos.
have kp : 0 < INR kappa by apply: lt_0_INR; apply/ltP.
have h1 : INR kappa * (1 - (Irate + 1) / nu) <= INR kappa - Delta.
  by apply: Rle_trans h; apply: Rle_trans lb; apply: Rmult_le_compat_l; [lra | apply: Rmax_r].
have h2 : Delta <= INR kappa * ((Irate + 1) / nu) by lra.
have h3 : Delta * nu <= INR kappa * (Irate + 1).
  have := Rmult_le_compat_r nu _ _ (Rlt_le _ _ np) h2.
  by rewrite Rmult_assoc /Rdiv Rmult_assoc Rinv_l ?Rmult_1_r; lra.
have : Delta * nu / INR kappa <= Irate + 1.
  apply: (Rmult_le_reg_r (INR kappa)) => //.
  by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
lra.
Qed.

(* From Z to unavailable blocks: if at most r of the archived blocks can be
   restored (restored <= r and restored <= Z pointwise), the expected number
   of unavailable blocks is at least [E[Z] - r]_+. *)
Corollary unavailable (r : R) (restored : TY -> TU -> 'I_n -> nat) :
  (forall y u j, INR (restored y u j) <= r) ->
  (forall y u j, (restored y u j <= Z y u j)%N) ->
  Rmax 0 (EZ - r) <=
    \sum_j \sum_y \sum_u w j y u * INR (Z y u j - restored y u j).
Proof.
move=> hr hz.
have e : forall j y u, INR (Z y u j - restored y u j) = INR (Z y u j) - INR (restored y u j).
  by move=> j y u; rewrite minus_INR //; apply/leP.
have ge0 : 0 <= \sum_j \sum_y \sum_u w j y u * INR (Z y u j - restored y u j).
  apply: sumR_ge0 => j _; apply: sumR_ge0 => y _; apply: sumR_ge0 => u _.
  by apply: Rmult_le_pos; [exact: w_ge0 | exact: pos_INR].
apply: Rmax_lub => //.
rewrite -[r]Rmult_1_r -sum_w -sumR_scal /EZ -sumR_sub.
apply: leR_sum => j _; rewrite -sumR_scal -sumR_sub; apply: leR_sum => y _.
rewrite -sumR_scal -sumR_sub; apply: leR_sum => u _.
rewrite e; have := hr y u j; have := w_ge0 j y u => w0 h.
have := Rmult_le_compat_l _ _ _ w0 h; lra.
Qed.

End PartB.

(* ------------------------------------------------------------------ *)
(* (C)(i) The full-ledger endpoint: Y = J* gives I = log2 n, and the order
   that archives the reported block first has Z = 0 everywhere it matters. *)

Section Ledger.
Variable n : nat.
Hypothesis n_pos : (0 < n)%N.

Definition ledger (j y : 'I_n) : R := if j == y then / INR n else 0.

Lemma ledger_joint : is_joint ledger.
Proof.
have np : 0 < INR n by apply: lt_0_INR; apply/ltP.
split=> [j y|].
  by rewrite /ledger; case: eqP => _; [apply: Rlt_le; apply: Rinv_0_lt_compat | lra].
rewrite (eq_bigr (fun _ => / INR n)); last by move=> j _; rewrite /ledger sumR_delta'.
by rewrite sumR_constT card_ord Rinv_r //; lra.
Qed.

Lemma ledger_uniform j : marg1 ledger j = / INR n.
Proof. by rewrite /marg1 /ledger sumR_delta'. Qed.

(* The full size ledger carries I(J*; Y) = log2 n bits. *)
Theorem ledger_rate : MI ledger = log2 (INR n).
Proof.
have np : 0 < INR n by apply: lt_0_INR; apply/ltP.
have n0 : (0 < #|'I_n|)%N by rewrite card_ord.
rewrite /MI (H_ext (q' := fun _ => / INR #|'I_n|)); last first.
  by move=> j; rewrite ledger_uniform card_ord.
rewrite H_uniform // card_ord.
have -> : condH ledger = 0.
  rewrite /condH big1 // => y _.
  have m : marg2 ledger y = / INR n by rewrite /marg2 /ledger sumR_delta.
  have -> : H (post ledger y) = 0.
    rewrite /H big1; first lra.
    move=> j _; rewrite /post m /ledger; case: eqP => _.
      have -> : / INR n / / INR n = 1 by field; lra.
      by rewrite log2_1; ring.
    by rewrite /Rdiv !Rmult_0_l.
  ring.
ring.
Qed.

(* Archiving the reported block first gives Z = min(tau - 1, kappa) = 0
   whenever the ledger reports y = J* (which it always does). *)
Theorem ledger_Z0 (kappa : nat) (TU : finType) (pU : TU -> R) (pos : 'I_n -> TU -> 'I_n -> nat) :
  (forall y u, pos y u y = 0%N) ->
  \sum_j \sum_y \sum_u ledger j y * pU u * INR (minn (pos y u j) kappa) = 0.
Proof.
move=> first; apply: big1 => j _; apply: big1 => y _; apply: big1 => u _.
rewrite /ledger; case: eqP => [->|_]; last by rewrite !Rmult_0_l.
by rewrite first min0n Rmult_0_r.
Qed.

(* The full ledger with an archive order that puts the reported block, J*,
   first (position 0): Z = min(tau - 1, kappa) = 0 on every outcome. *)
Theorem ledger_order_Z0 (kappa : nat) (TU : finType) (pU : TU -> R)
    (pi : 'I_n -> TU -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) (o : 'I_n) :
  nat_of_ord o = 0%N -> (forall y u, pi y u o = y) ->
  \sum_j \sum_y \sum_u ledger j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) = 0.
Proof.
move=> o0 first.
apply: (@ledger_Z0 kappa TU pU (fun y u j => nat_of_ord (invF (pi_inj y u) j))) => y u.
have e : invF (pi_inj y u) (pi y u o) = o by exact: invF_f.
by rewrite (first y u) in e; rewrite e o0.
Qed.

End Ledger.
