(* The paper's results, restated in its notation, each proved by applying
   the development.  Read line by line against paper.tex:
     Lemma 1            -> lemma1_list_fano; for any observation (values in
                           any space, I = sup over finite quantisations):
                           lemma1_any_observation
     Theorem 1 (A)-(E)  -> theorem1_* (for any observation:
                           theorem1_any_observation; batch policies almost surely, with the
                           full-ledger batch S = {Y} as an instance:
                           theorem1_batch_full_ledger; every adaptive policy,
                           repeats counted as wasted steps: theorem1_adaptive,
                           with a repeating policy as an instance:
                           theorem1_adaptive_repeating; (D) with the paper's
                           uniformly random order inside the bucket:
                           theorem1_buckets_random(_exist); the Theta and
                           (1+o(1)) nu rate sentences: theorem1_rates_theta(_instance),
                           theorem1_rates_matching(_instance); (C)(i)'s limit:
                           theorem1_low_rate_limit(_instance))
     Proposition 1      -> proposition1, proposition1_recovering (payloads in a
                           lossless store, h-bit handles in the prompt),
                           proposition1_recovering_store,
                           asymptotic separation: proposition1_k_ceil_sqrt,
                           proposition1_separation_feasible,
                           proposition1_separation_lossy,
                           proposition1_separation_rate,
                           proposition1_separation (c0 >= 1),
                           proposition1_separation_nonvacuous
     Proposition 2      -> for the paper's Gaussian channel (W in R^n,
                           independent N(m_i, sigma^2) coordinates, no premise
                           on divergences): proposition2_gaussian,
                           proposition2_gaussian_step3 (Step 3 keeping 1 - 1/n),
                           gaussian_pairwise_divergence (Step 2); its tighter
                           variant (prop2-tight) proposition2_gaussian_tight;
                           weaker forms
                           kept because they hold for other channels too: for
                           a FINITE channel with the Gaussian divergence as a
                           '<=' premise, proposition2_content,
                           proposition2_tight_gaussian, proposition2_tight,
                           proposition2_mixture; for an observation in a
                           measurable space with its likelihood ratios as the
                           premise (quantised divergences proved by data
                           processing, kl_data_processing):
                           proposition2_measurable(_tight)
     FRONTIER.md        -> frontier_converse, frontier_gibbs_maxent
   Conventions.  [n] = 'I_n (0-based).  A joint law of (J*, Y) is a
   nonnegative function pJY with total mass 1 (is_joint); "J* uniform" is
   marg1 pJY j = 1/n.  Private randomness U independent of (J*, Y) has law
   pU, so (J*, Y, U) has law pJY j y * pU u.  I(J*; Y) = MI pJY (bits),
   H = entropy in bits, log2 x = ln x / ln 2.  An archive order is an
   injective pi(y,u) : position -> block; tau - 1 = invF (pi_inj y u) j is
   the 0-based position of block j, so Z = min(tau - 1, kappa) is
   minn (invF (pi_inj y u) j) kappa. *)

From Coq Require Import Reals Lra FunctionalExtensionality.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq div.
From mathcomp Require Import fintype finset bigop finfun perm.
From VistaLab Require Import Entropy ListFano Theorem1 Adaptive Bucket GeneralObs.
From VistaLab Require Import Prop1 Separation Prop2 Frontier Repeats Rates.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Lemma double_lt (kappa n : nat) : (2 * kappa < n)%N -> (kappa.*2 < n)%N.
Proof. by rewrite mul2n. Qed.

(* ---------------------------------------------------------------------- *)
(* Lemma 1 (Fano, list-decoding form).  J* uniform on [n], U independent of
   (J*, Y), L(Y,U) any (Y,U)-measurable list of size 1 <= m <= n - 1,
   Pc = Pr[J* in L]:  log2 n - I <= 1 + Pc log2 m + (1 - Pc) log2 (n - m). *)
Theorem lemma1_list_fano (n m : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R) (L : Y -> U -> {set 'I_n}) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (forall y u, #|L y u| = m) -> (1 <= m <= n - 1)%N ->
  let I := MI pJY in
  let Pc := \sum_j \sum_y \sum_u (if j \in L y u then pJY j y * pU u else 0) in
  log2 (INR n) - I <= 1 + Pc * log2 (INR m) + (1 - Pc) * log2 (INR (n - m)).
Proof.
move=> pj ju pu Ls /andP [m1 mn] I Pc.
have n1 : (1 < n)%N by rewrite -subn_gt0 (leq_trans m1 mn).
have mlt : (m < n)%N by apply: (leq_ltn_trans mn); rewrite ltn_subrL /= (ltnW n1).
exact: (list_fano pj ju pu Ls m1 mlt).
Qed.

(* Lemma 1 for ANY observation W (values in any type TW): I(J*; W) is the
   supremum over finite quantisations (MIobs); the list L(W, U) of size m is
   any (W,U)-measurable list; Pc is computed under the law of (J*, W) through
   the finite quantisation w -> (u -> L(w, u)), which the list factors
   through. *)
Theorem lemma1_any_observation (n m : nat) (TW : Type) (L : obs_law n TW)
    (U : finType) (pU : U -> R) (Ls : TW -> U -> {set 'I_n})
    (Ls_size : forall w u, #|Ls w u| = m) :
  (forall j, qlaw L (fun _ : TW => tt) j tt = / INR n) -> is_dist pU ->
  (1 <= m <= n - 1)%N ->
  let q (w : TW) : {ffun U -> list_t n m} :=
    [ffun u => Sub (Ls w u) (introT eqP (Ls_size w u))] in
  qadm L q ->
  let Pc := \sum_j \sum_(t : {ffun U -> list_t n m}) \sum_u
              (if j \in val (t u) then qlaw L q j t * pU u else 0) in
  log2 (INR n) - MIobs L <= 1 + Pc * log2 (INR m) + (1 - Pc) * log2 (INR (n - m)).
Proof.
move=> ju pu mm q aq Pc.
have pj := qlaw_joint aq.
have ju' : forall j, marg1 (qlaw L q) j = / INR n by move=> j; rewrite marg1_qlaw ?ju.
have sz : forall (t : {ffun U -> list_t n m}) u, #|val (t u)| = m.
  by move=> t u; apply/eqP; exact: (valP (t u)).
have h := @lemma1_list_fano n m _ U (qlaw L q) pU (fun t u => val (t u)) pj ju' pu sz mm.
cbv zeta in h; have mi := MI_le_MIobs aq; rewrite -/Pc in h; lra.
Qed.

(* ---------------------------------------------------------------------- *)
(* Theorem 1 (information-recovery trade-off), the boxed bound (B):
   2 <= kappa < n/2, nu = log2((n - kappa)/kappa), any interface Y, any
   (Y,U)-measurable archive order:  E[Z] >= kappa [1 - (I + 1)/nu]_+. *)
Theorem theorem1_tradeoff (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  let EZ := \sum_j \sum_y \sum_u
              pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) in
  INR kappa * Rmax 0 (1 - (I + 1) / nu) <= EZ.
Proof.
move=> pj ju pu k2 kn I nu EZ.
exact: (EZ_lower_bound pj ju pu (ltnW k2) (double_lt kn) pi_inj).
Qed.

(* (B) tail sum: E[Z] = sum_{m=1}^{kappa} (1 - Pc(m)), Pc(m) = Pr[J* among
   the first m archived blocks]. *)
Theorem theorem1_tail_sum (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) :
  is_joint pJY -> is_dist pU ->
  let Pc (m : nat) := \sum_j \sum_y \sum_u
        (if (invF (pi_inj y u) j < m)%N then pJY j y * pU u else 0) in
  \sum_j \sum_y \sum_u pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa)
    = \sum_(1 <= m < kappa.+1) (1 - Pc m).
Proof.
move=> pj pu Pc; have := EZ_tail_sum kappa pj pu pi_inj.
rewrite /EZ /Pcm /Lm /w /Z /tau0 => ->; apply: eq_bigr => m _; congr (1 - _).
apply: eq_bigr => j _; apply: eq_bigr => y _; apply: eq_bigr => u _.
by rewrite inE.
Qed.

(* Theorem 1 (B) for ANY observation W (values in any type TW, e.g. the
   continuous content channel of Proposition 2): I(J*; W) is the supremum of
   I(J*; q(W)) over finite quantisations q (MIobs, GeneralObs.v); J* uniform;
   the archive order pi(W, U) is any (W,U)-measurable injective order.  E[Z]
   is computed under the law of (J*, W) through the finite quantisation
   w -> (u -> pi(w, u)), which the order factors through. *)
Theorem theorem1_any_observation (n kappa : nat) (TW : Type) (L : obs_law n TW)
    (U : finType) (pU : U -> R) (pi : TW -> U -> order_t n) :
  (forall j, qlaw L (fun _ : TW => tt) j tt = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let q (w : TW) := [ffun u => pi w u] in
  qadm L q ->
  let nu := log2 (INR (n - kappa) / INR kappa) in
  INR kappa * Rmax 0 (1 - (MIobs L + 1) / nu)
    <= \sum_j \sum_t \sum_u
         qlaw L q j t * pU u * INR (minn (invF (@order_inj n (t u)) j) kappa).
Proof.
move=> ju pu k2 kn q aq nu.
have pj := qlaw_joint aq.
have ju' : forall j, marg1 (qlaw L q) j = / INR n by move=> j; rewrite marg1_qlaw ?ju.
have h := @theorem1_tradeoff n kappa _ U (qlaw L q) pU (fun t u => val (t u))
  (fun t u => @order_inj n (t u)) pj ju' pu k2 kn; cbv zeta in h.
apply: Rle_trans h; rewrite -/nu.
have np : 0 < nu := nu_pos (ltnW k2) (double_lt kn).
have mi := MI_le_MIobs aq.
apply: Rmult_le_compat_l; first exact: pos_INR.
have le : (MI (qlaw L q) + 1) / nu <= (MIobs L + 1) / nu.
  by apply: Rmult_le_compat_r; [left; apply: Rinv_0_lt_compat | lra].
rewrite /Rmax; case: Rle_dec => a; case: Rle_dec => b; lra.
Qed.

(* (E) Adaptive policies: the next block is chosen from (y, u, flags seen so
   far); the flag is "freed < L" with sizes L = kappa ell (bulky) and ell
   (load-bearing); the run stops when the flag clears.  If the policy never
   re-archives along the all-"over" history, it archives exactly a prefix of
   that fixed order, and the bound of Theorem 1 holds for it
   (theorem1_adaptive_nonrepeating; every policy, repeats included, is
   theorem1_adaptive below). *)
Theorem theorem1_adaptive_prefix (n kappa ell : nat) (Y U : finType)
    (policy : Y -> U -> seq bool -> 'I_n)
    (ord_inj : forall y u, injective (fun t : 'I_n => policy y u (nseq t true)))
    (y : Y) (u : U) (jstar : 'I_n) :
  (1 <= kappa)%N -> (0 < ell)%N ->
  archived kappa ell policy y u jstar
    = [seq policy y u (nseq s true)
         | s <- iota 0 (minn (invF (ord_inj y u) jstar).+1 kappa)] /\
  Zad kappa ell policy y u jstar = minn (invF (ord_inj y u) jstar) kappa.
Proof.
move=> k1 l0; split.
  exact: (adaptive_archives_prefix k1 l0 ord_inj).
exact: (adaptive_Z k1 l0 ord_inj).
Qed.

Theorem theorem1_adaptive_nonrepeating (n kappa ell : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (policy : Y -> U -> seq bool -> 'I_n)
    (ord_inj : forall y u, injective (fun t : 'I_n => policy y u (nseq t true))) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N -> (0 < ell)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  INR kappa * Rmax 0 (1 - (I + 1) / nu)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zad kappa ell policy y u j).
Proof.
move=> pj ju pu k2 kn l0 I nu.
exact: (adaptive_lower_bound (ltnW k2) l0 ord_inj pj ju pu (double_lt kn)).
Qed.

(* (E) EVERY adaptive policy, with no premise on it (App. D, (E): "adaptivity
   through the binary flag adds no usable information [...] This is why the
   lower bound (eq:main-lb) holds for all adaptive content-only and rate-I
   policies alike").  The policy may re-archive a block: a repeat frees
   nothing (a block's size is freed the first time it is archived) and is a
   wasted step; Zrep counts every step that archives a load-bearing block,
   repeats included; the run stops when the flag "freed < L" clears or after
   F >= kappa steps.  (Repeats.v: removing the repeats of the all-"over"
   sequence gives an injective (Y,U)-measurable order whose
   Z = min(tau - 1, kappa) is pointwise <= Zrep, so a repeat never lowers
   E[Z].) *)
Theorem theorem1_adaptive (n kappa ell F : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R) (policy : Y -> U -> seq bool -> 'I_n) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N -> (0 < ell)%N -> (kappa <= F)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  INR kappa * Rmax 0 (1 - (I + 1) / nu)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zrep kappa ell policy F y u j).
Proof.
move=> pj ju pu k2 kn l0 kF I nu.
exact: (repeat_lower_bound l0 policy kF (ltnW k2) pj ju pu (double_lt kn)).
Qed.

(* (E) The premise of theorem1_adaptive_nonrepeating is not needed: the policy
   that always picks the same block b0 repeats (it is not injective along the
   all-"over" history), and theorem1_adaptive covers it (J* uniform, Y and U
   trivial, fuel n). *)
Theorem theorem1_adaptive_repeating (n kappa ell : nat) (b0 : 'I_n) :
  (2 <= kappa)%N -> (2 * kappa < n)%N -> (0 < ell)%N ->
  let pJY (j : 'I_n) (y : unit) := / INR n in
  let pU (u : unit) := 1 in
  let policy (y u : unit) (flags : seq bool) := b0 in
  ~ injective (fun t : 'I_n => policy tt tt (nseq t true)) /\
  INR kappa * Rmax 0 (1 - (MI pJY + 1) / log2 (INR (n - kappa) / INR kappa))
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zrep kappa ell policy n y u j).
Proof.
move=> k2 kn l0 pJY pU policy.
have kk : (kappa <= 2 * kappa)%N by rewrite mul2n -addnn leq_addr.
have kln : (kappa <= n)%N := ltnW (leq_ltn_trans kk kn).
have n2 : (1 < n)%N := leq_trans k2 kln.
have nR : 0 < INR n by apply: lt_0_INR; apply/ltP; exact: ltnW.
split.
  move=> inj.
  have := @inj (Ordinal (ltnW n2)) (Ordinal n2) erefl.
  by move/(congr1 val).
have pj : is_joint pJY.
  split=> [j y|]; first by left; apply: Rinv_0_lt_compat.
  rewrite (eq_bigr (fun _ => / INR n)); last by move=> j _; rewrite sumR_constT card_unit /=; ring.
  by rewrite sumR_constT card_ord; field; lra.
have ju : forall j, marg1 pJY j = / INR n by move=> j; rewrite /marg1 sumR_constT card_unit /=; ring.
have pu : is_dist pU by split=> [u|]; [rewrite /pU; lra | rewrite sumR_constT card_unit /=; lra].
exact: (@theorem1_adaptive n kappa ell n _ _ pJY pU policy pj ju pu k2 kn l0 kln).
Qed.

(* (E) Batch policies: archiving a (Y,U)-measurable set S(Y,U) at once, which
   clears the overflow ALMOST SURELY (on every outcome (J*, Y, U) of positive
   probability it contains J* or has >= kappa blocks), costs |S \ {J*}|
   load-bearing blocks; its expectation obeys the same bound. *)
Theorem theorem1_batch (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R) (S : Y -> U -> {set 'I_n}) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  (forall y u j, 0 < pJY j y * pU u -> j \in S y u \/ (kappa <= #|S y u|)%N) ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  INR kappa * Rmax 0 (1 - (I + 1) / nu)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR #|S y u :\ j|.
Proof.
move=> pj ju pu k2 kn adm I nu.
exact: (batch_lower_bound pj ju pu (ltnW k2) (double_lt kn) adm).
Qed.

(* (E) The full-ledger batch is an instance: Y = J*, S(Y, U) = {Y} clears the
   overflow almost surely (it contains J* on every outcome of positive
   probability) although |S| = 1 < kappa, so the sure premise "J* in S or
   |S| >= kappa for every (j, y, u)" fails; it costs nothing, E|S \ {J*}| = 0,
   and the bound of theorem1_batch applies to it (and is 0). *)
Theorem theorem1_batch_full_ledger (n kappa : nat) :
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let pJY (j y : 'I_n) := if j == y then / INR n else 0 in
  let pU (u : unit) := 1 in
  let S (y : 'I_n) (u : unit) := [set y] in
  (forall y u j, 0 < pJY j y * pU u -> j \in S y u \/ (kappa <= #|S y u|)%N) /\
  ~ (forall y u j, j \in S y u \/ (kappa <= #|S y u|)%N) /\
  \sum_j \sum_y \sum_u pJY j y * pU u * INR #|S y u :\ j| = 0 /\
  INR kappa * Rmax 0 (1 - (MI pJY + 1) / log2 (INR (n - kappa) / INR kappa))
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR #|S y u :\ j|.
Proof.
move=> k2 kn pJY pU S.
have n0 : (0 < n)%N by apply: leq_ltn_trans kn.
have as_ : forall y u j, 0 < pJY j y * pU u -> j \in S y u \/ (kappa <= #|S y u|)%N.
  move=> y u j; rewrite /pJY /S; case: eqP => [-> _|_]; first by left; rewrite inE.
  by rewrite Rmult_0_l => /Rlt_irrefl.
have pu : is_dist pU.
  by split=> [u|]; [rewrite /pU; lra | rewrite sumR_constT card_unit /=; lra].
split=> //; split.
  move=> sure.
  have j1 : (1 < n)%N by apply: leq_trans kn; rewrite ltnS muln_gt0 /= (leq_trans _ k2).
  case: (sure (Ordinal n0) tt (Ordinal j1)); first by rewrite inE.
  by rewrite /S cards1 => k1; move: (leq_trans k2 k1).
split.
  apply: big1 => j _; apply: big1 => y _; apply: big1 => u _.
  rewrite /pJY /S; case: eqP => [->|_]; last by rewrite !Rmult_0_l.
  have -> : [set y] :\ y = set0 by apply/setP => z; rewrite !inE andNb.
  by rewrite cards0 Rmult_0_r.
exact: (@theorem1_batch n kappa _ _ pJY pU S (ledger_joint n0) (@ledger_uniform n) pu k2 kn as_).
Qed.

(* (C)(i) low-rate endpoint: 1 - (I+1)/nu <= E[Z]/kappa <= 1, hence
   E[Z]/kappa -> 1 whenever (I+1)/nu -> 0. *)
Theorem theorem1_low_rate (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  let EZ := \sum_j \sum_y \sum_u
              pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) in
  1 - (I + 1) / nu <= EZ / INR kappa <= 1.
Proof.
move=> pj ju pu k2 kn I nu EZ.
exact: (EZ_low_rate pj ju pu (ltnW k2) (double_lt kn) pi_inj).
Qed.

(* (C)(i)'s limit (Theorem 1: "any low-rate interface satisfying
   (I+1)/nu -> 0 incurs E[Z]/kappa -> 1"): along any sequence of instances
   (n_i blocks, kappa_i, any interface Y_i, private randomness U_i, any
   (Y_i,U_i)-measurable archive order), (I_i + 1)/nu_i -> 0 implies
   E[Z_i]/kappa_i -> 1. *)
Theorem theorem1_low_rate_limit (n kappa : nat -> nat) (Y U : nat -> finType)
    (pJY : forall i, 'I_(n i) -> Y i -> R) (pU : forall i, U i -> R)
    (pi : forall i, Y i -> U i -> 'I_(n i) -> 'I_(n i))
    (pi_inj : forall i y u, injective (pi i y u)) :
  (forall i, is_joint (pJY i)) -> (forall i j, marg1 (pJY i) j = / INR (n i)) ->
  (forall i, is_dist (pU i)) -> (forall i, 2 <= kappa i)%N -> (forall i, 2 * kappa i < n i)%N ->
  let I i := MI (pJY i) in
  let nu i := log2 (INR (n i - kappa i) / INR (kappa i)) in
  let EZ i := \sum_j \sum_y \sum_u
                pJY i j y * pU i u * INR (minn (invF (pi_inj i y u) j) (kappa i)) in
  Un_cv (fun i => (I i + 1) / nu i) 0 -> Un_cv (fun i => EZ i / INR (kappa i)) 1.
Proof.
move=> pj ju pu k2 kn I nu EZ lim eps e0.
have [N hN] := lim eps e0; exists N => i ii.
have [lo hi] := EZ_low_rate (pj i) (ju i) (pu i) (ltnW (k2 i)) (double_lt (kn i)) (pi_inj i).
have := hN i ii; rewrite /R_dist Rminus_0_r => /Rabs_def2 [a _].
apply: Rabs_def1; rewrite /EZ; rewrite /EZ /Theorem1.EZ /Theorem1.w /Theorem1.Z /Theorem1.tau0 in lo hi;
  rewrite /I /nu /Theorem1.Irate /Theorem1.nu in a lo; lra.
Qed.

(* The premise of theorem1_low_rate_limit is met (not vacuous): the
   size-blind interface (Y = unit, so I = 0) with kappa = 2 and
   n_i = 2^(i+2) + 2 blocks has nu_i = i + 1 and (I + 1)/nu_i -> 0; by
   theorem1_low_rate_limit every archive order then has E[Z]/kappa -> 1. *)
Lemma INR_exp2 m : INR (2 ^ m) = 2 ^ m.
Proof. by elim: m => [|m IH] //=; rewrite expnS mult_INR IH. Qed.

Theorem theorem1_low_rate_limit_instance :
  let n i := (2 ^ i.+2 + 2)%N in
  let pJY i (j : 'I_(n i)) (y : unit) := / INR (n i) in
  (forall i, is_joint (pJY i) /\ (forall j, marg1 (pJY i) j = / INR (n i)) /\
             (2 * 2 < n i)%N /\ MI (pJY i) = 0) /\
  Un_cv (fun i => (MI (pJY i) + 1) / log2 (INR (n i - 2) / INR 2)) 0.
Proof.
move=> n pJY.
have nR : forall i, 0 < INR (n i) by move=> i; apply: lt_0_INR; apply/ltP; rewrite addn_gt0 orbT.
have pj : forall i, is_joint (pJY i).
  move=> i; split=> [j y|]; first by left; apply: Rinv_0_lt_compat.
  rewrite (eq_bigr (fun _ => / INR (n i))); last by move=> j _; rewrite sumR_constT card_unit /=; ring.
  by rewrite sumR_constT card_ord; have := nR i; move=> h; field; lra.
have mi : forall i, MI (pJY i) = 0.
  move=> i; rewrite (@MI_deterministic _ _ (pJY i) (fun _ => tt) (pj i)); last by move=> a [].
  apply: (@H_point _ _ tt) => -[] /=.
  rewrite /marg2 /pJY sumR_constT card_ord; have := nR i; move=> h; field; lra.
split.
  move=> i; split; first exact: pj.
  split; first by move=> j; rewrite /marg1 /pJY sumR_constT card_unit /=; ring.
  split; last exact: mi.
  have h : (4 <= 2 ^ i.+2)%N by rewrite !expnS mulnA leq_pmulr // expn_gt0.
  by apply: (@leq_trans (4 + 2)) => //; exact: leq_add h (leqnn 2).
have nu_e : forall i, log2 (INR (n i - 2) / INR 2) = INR i + 1.
  move=> i; rewrite /n addnK INR_exp2 /=.
  have -> : 2 * (2 * 2 ^ i) / (1 + 1) = 2 ^ i.+1 by rewrite /=; field.
  by rewrite /log2 ln_pow ?S_INR; [field; have := ln2_pos; lra | lra].
move=> eps e0.
have [N [hN _]] := nat_above (/ eps).
exists N => i ii; rewrite /R_dist Rminus_0_r mi nu_e Rplus_0_l.
have iR : INR N <= INR i by apply: le_INR.
have p : 0 < INR i + 1 by have := pos_INR i; lra.
rewrite Rabs_pos_eq; last by rewrite /Rdiv Rmult_1_l; left; apply: Rinv_0_lt_compat.
rewrite /Rdiv Rmult_1_l; apply: (Rmult_lt_reg_r (INR i + 1)) => //.
rewrite Rinv_l; last lra.
have : / eps * eps < (INR i + 1) * eps by apply: Rmult_lt_compat_r; lra.
by rewrite Rinv_l; lra.
Qed.

(* (C)(ii) threshold and (iii) price. *)
Theorem theorem1_threshold (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) (delta : R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  let EZ := \sum_j \sum_y \sum_u
              pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) in
  EZ <= delta * INR kappa -> (1 - delta) * nu - 1 <= I.
Proof.
move=> pj ju pu k2 kn I nu EZ.
exact: (threshold pj ju pu (ltnW k2) (double_lt kn) (pi_inj := pi_inj)).
Qed.

Theorem theorem1_price (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) (Delta : R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (2 <= kappa)%N -> (2 * kappa < n)%N ->
  let I := MI pJY in
  let nu := log2 (INR (n - kappa) / INR kappa) in
  let EZ := \sum_j \sum_y \sum_u
              pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) in
  EZ <= INR kappa - Delta -> Delta * nu / INR kappa - 1 <= I.
Proof.
move=> pj ju pu k2 kn I nu EZ.
exact: (price pj ju pu (ltnW k2) (double_lt kn) (pi_inj := pi_inj)).
Qed.

(* (C) From Z to errors: if at most r archived blocks can be restored, at
   least [E[Z] - r]_+ remain unavailable in expectation. *)
Theorem theorem1_unavailable (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u))
    (r : R) (restored : Y -> U -> 'I_n -> nat) :
  is_joint pJY -> is_dist pU ->
  let Z y u j := minn (invF (pi_inj y u) j) kappa in
  (forall y u j, INR (restored y u j) <= r) ->
  (forall y u j, (restored y u j <= Z y u j)%N) ->
  Rmax 0 (\sum_j \sum_y \sum_u pJY j y * pU u * INR (Z y u j) - r)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Z y u j - restored y u j).
Proof. by move=> pj pu Z; exact: (unavailable pj pu (pi_inj := pi_inj)). Qed.

(* (C)(i) Full ledger: the interface reveals J* (Y = J*, I = log2 n bits);
   an archive order pi(y, u) that puts the reported block first (position 0)
   gives Z = min(tau - 1, kappa) = 0 on every outcome, so E[Z] = 0. *)
Theorem theorem1_full_ledger (n kappa : nat) (U : finType) (pU : U -> R) (n0 : (0 < n)%N)
    (pi : 'I_n -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) :
  let pJY (j y : 'I_n) := if j == y then / INR n else 0 in
  (forall y u, pi y u (Ordinal n0) = y) ->
  MI pJY = log2 (INR n) /\
  \sum_j \sum_y \sum_u pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa) = 0.
Proof.
move=> pJY first; split; first exact: ledger_rate.
exact: (@ledger_order_Z0 n kappa U pU pi pi_inj (Ordinal n0) (erefl _) first).
Qed.

(* Such an order exists: the cyclic shift r -> r + y (mod n) archives y first. *)
Theorem theorem1_full_ledger_order_exists (n : nat) (U : finType) (n0 : (0 < n)%N) :
  exists (pi : 'I_n -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)),
    forall y u, pi y u (Ordinal n0) = y.
Proof.
exists (fun y _ r => oadd n0 r y), (fun y _ => @oadd_inj_l n n0 y) => y u.
by apply: val_inj => /=; rewrite add0n modn_small.
Qed.

(* (D) Balanced buckets: M buckets of size <= ceil(n/M) = (n + M - 1) %/ M,
   Y = bucket(J_star), probing inside the bucket:
   E[Z] < n/(2M) and I(J*; Y) = H(Y) <= log2 M. *)
Theorem theorem1_buckets (n M kappa : nat) (bucket : 'I_n -> 'I_M) :
  (0 < n)%N -> (0 < M)%N ->
  (forall c, (#|[set j | bucket j == c]| <= (n + M - 1) %/ M)%N) ->
  let pJY (j : 'I_n) (c : 'I_M) := if bucket j == c then / INR n else 0 in
  let pos (j : 'I_n) := #|[set i | (bucket i == bucket j) && (i < j)%N]| in
  \sum_j / INR n * INR (minn (pos j) kappa) < INR n / (2 * INR M) /\
  MI pJY = H (marg2 pJY) /\ H (marg2 pJY) <= log2 (INR M).
Proof.
move=> n0 M0 bal pJY pos; split; first exact: (bucket_EZ kappa n0 M0 bal).
exact: (bucket_rate n0 bucket).
Qed.

(* (D) with the paper's order (App. D, (D)): "The agent probes blocks inside
   the reported bucket in uniformly random order until the flag clears.
   [...] Because ceil(x) - 1 < x, E[Z] < n/(2M)."  U is a uniformly random
   permutation u of [n] (law 1/n! each), independent of (J*, Y); the reported
   bucket y is probed in increasing u(i), so the blocks of each bucket come in
   uniformly random order and block j sits at 0-based position
   #{i in bucket y : u(i) < u(j)}; Z = min(that position, kappa).  (Bucket.v
   proves E[Z] <= (ceil(n/M) - 1)/2 for every fixed probing order, hence on
   average over any random one.) *)
Theorem theorem1_buckets_random (n M kappa : nat) (bucket : 'I_n -> 'I_M) :
  (0 < n)%N -> (0 < M)%N ->
  (forall c, (#|[set j | bucket j == c]| <= (n + M - 1) %/ M)%N) ->
  let pJY (j : 'I_n) (c : 'I_M) := if bucket j == c then / INR n else 0 in
  let pU (u : {perm 'I_n}) := / INR n`! in
  let pos (y : 'I_M) (u : {perm 'I_n}) (j : 'I_n) :=
    #|[set i | (bucket i == y) && (u i < u j)%N]| in
  is_dist pU /\
  \sum_j \sum_y \sum_u pJY j y * pU u * INR (minn (pos y u j) kappa) < INR n / (2 * INR M) /\
  MI pJY = H (marg2 pJY) /\ H (marg2 pJY) <= log2 (INR M).
Proof.
move=> n0 M0 bal pJY pU pos.
have fR : 0 < INR n`! by apply: lt_0_INR; apply/ltP; exact: fact_gt0.
have pu : is_dist pU.
  split=> [u|]; first by left; apply: Rinv_0_lt_compat.
  by rewrite sumR_constT card_Sn; field; lra.
split=> //; split; last exact: (bucket_rate n0 bucket).
have -> : \sum_j \sum_y \sum_u pJY j y * pU u * INR (minn (pos y u j) kappa)
          = \sum_u pU u * EZr kappa bucket (fun i => nat_of_ord (u i)).
  rewrite (eq_bigr (fun j => \sum_u / INR n * pU u * INR (minn (pos (bucket j) u j) kappa))).
    rewrite exchange_big /=; apply: eq_bigr => u _.
    rewrite /EZr -sumR_scal; apply: eq_bigr => j _; rewrite /pos /posr; ring.
  move=> j _; rewrite (eq_bigr (fun y => if bucket j == y then
      \sum_u / INR n * pU u * INR (minn (pos (bucket j) u j) kappa) else 0)).
    by rewrite sumR_delta'.
  move=> y _; rewrite /pJY; case: eqP => [<-|_]; first by [].
  by apply: big1 => u _; ring.
apply: (bucket_EZ_random kappa n0 M0 bal pu) => u a b /val_inj; exact: perm_inj.
Qed.

(* Not vacuous: for every 1 <= M <= n a balanced M-bucket partition exists
   (runs of ceil(n/M) consecutive blocks), and with it the random-order
   probe has E[Z] < n/(2M). *)
Theorem theorem1_buckets_random_exist (n M kappa : nat) :
  (1 <= M <= n)%N ->
  exists bucket : 'I_n -> 'I_M,
    (forall c, (#|[set j | bucket j == c]| <= (n + M - 1) %/ M)%N) /\
    \sum_j \sum_y \sum_(u : {perm 'I_n})
       (if bucket j == y then / INR n else 0) * / INR n`!
       * INR (minn #|[set i | (bucket i == y) && (u i < u j)%N]| kappa)
      < INR n / (2 * INR M).
Proof.
case/andP=> M0 Mn; have n0 : (0 < n)%N by apply: leq_trans Mn.
exists (bal_bucket M0 Mn); split; first exact: bal_bucket_balanced.
by have [_ [h _]] := theorem1_buckets_random kappa n0 M0 (bal_bucket_balanced M0 Mn).
Qed.

(* (D) for every 1 <= M <= n a balanced M-bucket interface exists (runs of
   ceil(n/M) consecutive blocks), with E[Z] < n/(2M) and I(J*; Y) <= log2 M. *)
Theorem theorem1_buckets_exist (n M kappa : nat) :
  (1 <= M <= n)%N ->
  exists bucket : 'I_n -> 'I_M,
    (forall c, (#|[set j | bucket j == c]| <= (n + M - 1) %/ M)%N) /\
    (\sum_j / INR n * INR (minn #|[set i | (bucket i == bucket j) && (i < j)%N]| kappa)
       < INR n / (2 * INR M)) /\
    (MI (fun j c => if bucket j == c then / INR n else 0) <= log2 (INR M)).
Proof. by case/andP=> M0 Mn; exact: (buckets_exist kappa M0 Mn). Qed.

(* (D) sufficient rate: for delta > 0, any bucket count M <= n with
   M >= n / (2 delta kappa) (e.g. M = ceil(n/(2 delta kappa))) gives an
   interface of rate I <= log2 M with E[Z] < delta kappa. *)
Theorem theorem1_sufficient_rate (n M kappa : nat) (delta : R) :
  (1 <= M <= n)%N -> INR n <= 2 * delta * INR kappa * INR M ->
  exists bucket : 'I_n -> 'I_M,
    (\sum_j / INR n * INR (minn #|[set i | (bucket i == bucket j) && (i < j)%N]| kappa)
       < delta * INR kappa) /\
    (MI (fun j c => if bucket j == c then / INR n else 0) <= log2 (INR M)).
Proof.
case/andP=> M0 Mn big.
have [bucket [_ [ez rate]]] := buckets_exist kappa M0 Mn.
exists bucket; split => //.
apply: (Rlt_le_trans _ _ _ ez).
have MR : 0 < INR M by apply: lt_0_INR; apply/ltP.
apply: (Rmult_le_reg_r (2 * INR M)); first lra.
by rewrite /Rdiv Rmult_assoc Rinv_l; lra.
Qed.

(* The rate sentences of (D) (App. D): "For every fixed delta in (0,1), this
   sufficient rate and the necessary rate (1-delta) nu - 1 are both
   Theta(log2(n/kappa))."  The sufficient rate is min{log2 n, log2 M} with
   M = ceil(n/(2 delta kappa)) (any integer M with
   M - 1 < n/(2 delta kappa) <= M); Theta as n/kappa -> oo: constants
   c1, c2 > 0 and a threshold t0, depending on delta only, with
   c1 log2(n/kappa) <= rate <= c2 log2(n/kappa) once log2(n/kappa) >= t0.
   (Rates.v gives the explicit two-sided bounds behind it:
   log2 x - 1 <= nu <= log2 x, (1-delta) log2 x - 2 <= Rnec <= (1-delta) log2 x - 1,
   log2 x - 1 <= Rsuf <= log2 x + log2((1+delta)/(2 delta)), x = n/kappa.) *)
Theorem theorem1_rates_theta (delta : R) : 0 < delta < 1 ->
  exists c1 c2 t0 : R, 0 < c1 /\ 0 < c2 /\
    forall n kappa M : nat, (2 <= kappa)%N -> (2 * kappa < n)%N ->
      INR M - 1 < INR n / (2 * delta * INR kappa) <= INR M ->
      let x := INR n / INR kappa in
      let nu := log2 (INR (n - kappa) / INR kappa) in
      let Rnec := (1 - delta) * nu - 1 in
      let Rsuf := Rmin (log2 (INR n)) (log2 (INR M)) in
      t0 <= log2 x ->
      (c1 * log2 x <= Rnec <= c2 * log2 x) /\ (c1 * log2 x <= Rsuf <= c2 * log2 x).
Proof.
move=> d01; have [c1 [c2 [t0 [c10 [c20 h]]]]] := rates_theta d01.
by exists c1, c2, t0; split=> // ; split=> // n kappa M k2 kn Mc x nu Rn Rs; exact: h.
Qed.

(* Not vacuous: at delta = 1/2 the premises hold with log2(n/kappa) above any
   threshold (kappa = 2, n = 2^(m+3), M = n/2 = 2^(m+2)). *)
Theorem theorem1_rates_theta_instance (t0 : R) :
  exists n kappa M : nat, (2 <= kappa)%N /\ (2 * kappa < n)%N /\
    INR M - 1 < INR n / (2 * / 2 * INR kappa) <= INR M /\
    t0 <= log2 (INR n / INR kappa).
Proof.
have [m [hm _]] := nat_above t0.
exists (2 ^ m.+3)%N, 2%N, (2 ^ m.+2)%N; split=> //; split.
  by apply: (@leq_trans 8) => //; rewrite !expnS !mulnA leq_pmulr // expn_gt0.
have e2 : forall a, INR (2 ^ a) = 2 ^ a.
  by elim=> [|a IH] //=; rewrite expnS mult_INR IH.
have p : 0 < 2 ^ m by apply: pow_lt; lra.
rewrite !e2 /= (_ : 2 * / 2 * (1 + 1) = 2); last by field.
have -> : 2 * (2 * (2 * 2 ^ m)) / 2 = 2 * (2 * 2 ^ m) by field.
split; first lra.
have -> : 2 * (2 * 2 ^ m) = 2 ^ m.+2 by [].
rewrite /log2 ln_pow; last lra.
rewrite S_INR S_INR; have := ln2_pos => l2.
have -> : (INR m + 1 + 1) * ln 2 / ln 2 = INR m + 2 by field; lra.
lra.
Qed.

(* "If instead delta_n -> 0 with log2(1/delta_n) = o(nu), both rates are
   (1+o(1)) nu": along any sequence of instances (n_i, kappa_i, delta_i, M_i as
   above) with delta_i -> 0 and log2(1/delta_i)/nu_i -> 0, Rnec_i/nu_i -> 1 and
   Rsuf_i/nu_i -> 1.  (Rates.v: for delta <= 1/2,
   |Rnec/nu - 1| <= delta + log2(1/delta)/nu and |Rsuf/nu - 1| <= 2 log2(1/delta)/nu.) *)
Theorem theorem1_rates_matching (n kappa M : nat -> nat) (delta : nat -> R) :
  (forall i, 2 <= kappa i)%N -> (forall i, 2 * kappa i < n i)%N ->
  (forall i, 0 < delta i < 1) ->
  (forall i, INR (M i) - 1 < INR (n i) / (2 * delta i * INR (kappa i)) <= INR (M i)) ->
  let nu i := log2 (INR (n i - kappa i) / INR (kappa i)) in
  let Rnec i := (1 - delta i) * nu i - 1 in
  let Rsuf i := Rmin (log2 (INR (n i))) (log2 (INR (M i))) in
  Un_cv delta 0 -> Un_cv (fun i => log2 (/ delta i) / nu i) 0 ->
  Un_cv (fun i => Rnec i / nu i) 1 /\ Un_cv (fun i => Rsuf i / nu i) 1.
Proof. by move=> k2 kn d01 Mc nu Rn Rs dz rz; exact: (rates_matching k2 kn d01 Mc dz rz). Qed.

Lemma cv_squeeze0 (a : nat -> R) : (forall i, 0 <= a i <= / (INR i + 1)) -> Un_cv a 0.
Proof.
move=> ab eps e0.
have [N [hN _]] := nat_above (/ eps).
exists N => i ii; rewrite /R_dist Rminus_0_r.
have [a0 a1] := ab i.
have iR : INR N <= INR i by apply: le_INR.
have p : 0 < INR i + 1 by have := pos_INR i; lra.
rewrite Rabs_pos_eq //; apply: (Rle_lt_trans _ _ _ a1).
apply: (Rmult_lt_reg_r (INR i + 1)) => //.
rewrite Rinv_l; last lra.
have : / eps * eps < (INR i + 1) * eps by apply: Rmult_lt_compat_r; lra.
by rewrite Rinv_l; lra.
Qed.

Lemma log2_pow2 m : log2 (2 ^ m) = INR m.
Proof. by rewrite /log2 ln_pow; [field; have := ln2_pos; lra | lra]. Qed.

(* The premises of theorem1_rates_matching are met (not vacuous): kappa_i = 2,
   delta_i = 2^-(i+1) -> 0, n_i = 2^((i+1)^2 + 2) blocks, M_i = n_i/(2 delta_i kappa_i)
   = 2^((i+1)^2 + i + 1) exactly, and log2(1/delta_i)/nu_i <= 1/(i+1) -> 0. *)
Theorem theorem1_rates_matching_instance :
  let kappa (i : nat) := 2%N in
  let n i := (2 ^ (i.+1 * i.+1 + 2))%N in
  let delta i := / 2 ^ i.+1 in
  let M i := (2 ^ (i.+1 * i.+1 + i.+1))%N in
  (forall i, 2 <= kappa i)%N /\ (forall i, 2 * kappa i < n i)%N /\
  (forall i, 0 < delta i < 1) /\
  (forall i, INR (M i) - 1 < INR (n i) / (2 * delta i * INR (kappa i)) <= INR (M i)) /\
  Un_cv delta 0 /\
  Un_cv (fun i => log2 (/ delta i) / log2 (INR (n i - kappa i) / INR (kappa i))) 0.
Proof.
move=> kappa n delta M.
have i2 : INR 2 = 2 by rewrite /=; ring.
have pw : forall a b : nat, 2 ^ (a + b)%N = 2 ^ a * 2 ^ b by move=> a b; rewrite pow_add.
have p2 : forall a, 0 < 2 ^ a by move=> a; apply: pow_lt; lra.
have iS : forall i, INR i + 1 <= 2 ^ i.+1.
  move=> i; rewrite -INR_exp2 -S_INR; apply: le_INR; apply/leP; exact: ltnW (ltn_expl _ (ltnSn 1)).
split=> //; split.
  have e4 : (2 * 2)%N = (2 ^ 2)%N by [].
  move=> i; rewrite /n /kappa e4 ltn_exp2l //.
  by rewrite -{1}(add0n 2%N) ltn_add2r muln_gt0.
split.
  move=> i; split; first by apply: Rinv_0_lt_compat.
  rewrite -Rinv_1; apply: Rinv_lt_contravar; first by rewrite Rmult_1_l.
  by apply: Rlt_pow_R1; [lra | apply/ltP].
split.
  move=> i; rewrite /M /n /delta /kappa !INR_exp2 !pw i2.
  have a0 := p2 (i.+1 * i.+1)%N; have b0 := p2 i.+1.
  move: a0 b0; move: (2 ^ (i.+1 * i.+1)%N) (2 ^ i.+1) => a b a0 b0.
  have -> : a * 2 ^ 2 / (2 * / b * 2) = a * b by field; lra.
  lra.
split.
  apply: cv_squeeze0 => i; split; first by left; apply: Rinv_0_lt_compat.
  by apply: Rinv_le_contravar => //; have := pos_INR i; lra.
apply: cv_squeeze0 => i.
set t := (i.+1 * i.+1)%N.
have tR : INR t = (INR i + 1) * (INR i + 1) by rewrite /t mult_INR S_INR.
have ld : log2 (/ delta i) = INR i + 1 by rewrite /delta Rinv_inv log2_pow2 S_INR.
have nu_lo : INR t <= log2 (INR (n i - kappa i) / INR (kappa i)).
  rewrite -log2_pow2; apply: log2_le; first exact: p2.
  rewrite /n /kappa minus_INR; last first.
    by apply/leP; rewrite (_ : 2%N = 2 ^ 1)%N // leq_exp2l // addn2.
  rewrite INR_exp2 pw i2 -/t (_ : 2 ^ 2 = 4); last by ring.
  have : 1 <= 2 ^ t by apply: pow_R1_Rle; lra.
  lra.
have ip : 0 < INR i + 1 by have := pos_INR i; lra.
have tp : 0 < INR t by rewrite tR; nra.
rewrite ld; split.
  by apply: Rmult_le_pos; [lra | left; apply: Rinv_0_lt_compat; lra].
apply: (Rle_trans _ ((INR i + 1) / INR t)).
  apply: Rmult_le_compat_l; first lra.
  by apply: Rinv_le_contravar.
by rewrite tR; apply: Req_le; field; lra.
Qed.

(* ---------------------------------------------------------------------- *)
(* Proposition 1.  N independent uniform k-bit blocks (X uniform on
   {ffun 'I_N -> 'I_(2^k)}), any pre-reveal state R with H(R) <= B, any
   guess g(R, i_star) with i_star uniform:
   Pr[correct] <= B/(Nk) + 1/k. *)
Theorem proposition1 (N k : nat) (S : finType)
    (pXR : {ffun 'I_N -> 'I_(2 ^ k)} -> S -> R) (g : S -> 'I_N -> 'I_(2 ^ k)) (B : R) :
  (0 < N)%N -> (0 < k)%N ->
  is_joint pXR -> (forall x, marg1 pXR x = / INR ((2 ^ k) ^ N)) ->
  H (marg2 pXR) <= B ->
  let Pcorrect := / INR N * \sum_i \sum_(x : {ffun 'I_N -> 'I_(2 ^ k)}) \sum_s
                     (if g s i == x i then pXR x s else 0) in
  Pcorrect <= B / (INR N * INR k) + / INR k.
Proof.
move=> N0 k0 pj xu HB Pc.
have K2 : (1 < 2 ^ k)%N by rewrite -{1}(expn0 2) ltn_exp2l.
exact: (prop1_bits N0 K2 pj xu g (erefl _) HB).
Qed.

(* The recovering method (App. B, "VISTA attains probability one"): every
   block is written to a payload store outside the prompt, which hands back a
   handle of h bits per block; the prompt holds the instruction and the N
   handles (N h bits); on the query i* the method reads the store by the
   handle of block i* (one block of s_block bits enters the prompt).  If the
   store is lossless (reading by a block's handle returns that block) and
   instruction + N handles + one block fit in B, the prompt stays within B and
   the method is correct with probability 1 under ANY joint law of the
   content and a state.  DEFINITIONAL: correctness is true by the premise
   (the store is lossless), as the paper's own sentence is ("Whenever the
   instruction, the handles, and one recovered block fit within B, the method
   emits X_{i*} exactly"); the content is the budget arithmetic and that the
   lossless store exists (proposition1_recovering_store). *)
Theorem proposition1_recovering (N K h : nat) (S : finType)
    (pXR : {ffun 'I_N -> 'I_K} -> S -> R)
    (Store : Type) (write : {ffun 'I_N -> 'I_K} -> Store)
    (handle : {ffun 'I_N -> 'I_K} -> 'I_N -> 'I_(2 ^ h))
    (read : Store -> 'I_(2 ^ h) -> option 'I_K) (s_instr s_block B : nat) :
  (0 < N)%N -> is_joint pXR ->
  (forall x i, read (write x) (handle x i) = Some (x i)) ->
  (s_instr + N * h + s_block <= B)%N ->
  let prompt_before := (s_instr + N * h)%N in
  let output x i := read (write x) (handle x i) in
  (prompt_before <= B)%N /\
  (/ INR N * \sum_i \sum_(x : {ffun 'I_N -> 'I_K}) \sum_s
      (if output x i == Some (x i) then pXR x s else 0)) = 1.
Proof.
move=> N0 pj lossless feas pb out; split.
  by apply: leq_trans feas; rewrite leq_addr.
have NR : 0 < INR N by apply: lt_0_INR; apply/ltP.
rewrite (eq_bigr (fun _ => 1)); first by rewrite sumR_constT card_ord; field; lra.
move=> i _; rewrite -pj.2; apply: eq_bigr => x _; apply: eq_bigr => r _.
by rewrite /out lossless eqxx.
Qed.

(* Handles of h bits can name N blocks apart iff N <= 2^h (so log2 N bits per
   handle are necessary and sufficient), and with N <= 2^h a lossless store
   exists: the archive indexed by the handle, read back by decoding it. *)
Theorem proposition1_recovering_store (N K h : nat) :
  ((exists handle : 'I_N -> 'I_(2 ^ h), injective handle) <-> (N <= 2 ^ h)%N) /\
  ((N <= 2 ^ h)%N ->
   exists (write : {ffun 'I_N -> 'I_K} -> {ffun 'I_N -> 'I_K})
          (handle : 'I_N -> 'I_(2 ^ h))
          (read : {ffun 'I_N -> 'I_K} -> 'I_(2 ^ h) -> option 'I_K),
     injective handle /\ forall x i, read (write x) (handle i) = Some (x i)).
Proof.
split.
  split=> [[handle inj]|Nh].
    by have := leq_card _ inj; rewrite !card_ord.
  by exists (widen_ord Nh) => a b /(congr1 val) /= e; apply: val_inj.
move=> Nh.
exists id, (widen_ord Nh),
  (fun s (a : 'I_(2 ^ h)) => if insub (nat_of_ord a) is Some i then Some (s i) else None).
split; first by move=> a b /(congr1 val) /= e; apply: val_inj.
move=> x i /=; rewrite (insubT (fun m => (m < N)%N) (ltn_ord i)) /=.
by congr (Some (x _)); apply: val_inj.
Qed.

(* Asymptotic separation (App. B).  k = ceil(sqrt N) bits per block: the
   definition ceil_sqrt N (= 1 + floor(sqrt(N - 1)), 0 at N = 0) is the
   ceiling, k - 1 < sqrt N <= k. *)
Theorem proposition1_k_ceil_sqrt (N : nat) :
  let k := INR (ceil_sqrt N) in
  k - 1 < sqrt (INR N) <= k.
Proof. exact: ceil_sqrt_spec. Qed.

(* (i) Handle cost c0 N log2 N (0 <= c0), budget B = c N log2 N with c > c0,
   k = ceil(sqrt N), any fixed instruction size s0 >= 0 (the paper's
   B >= c0 N log2 N + k is s0 = 0): the recovering method stays feasible for
   all large N. *)
Theorem proposition1_separation_feasible (c0 c s0 : R) :
  0 <= c0 < c -> 0 <= s0 ->
  exists N0 : nat, forall N : nat, (N0 <= N)%N ->
    let k := INR (ceil_sqrt N) in
    let B := c * INR N * log2 (INR N) in
    c0 * INR N * log2 (INR N) + s0 + k <= B.
Proof. by move=> cc s0p; exact: separation_feasible. Qed.

(* (ii) B = c N log2 N (c >= 0), k = ceil(sqrt N): the lossy bound
   B/(Nk) + 1/k of Proposition 1 tends to 0 as N -> oo. *)
Theorem proposition1_separation_lossy (c : R) :
  0 <= c ->
  Un_cv (fun N : nat =>
           let k := INR (ceil_sqrt N) in
           let B := c * INR N * log2 (INR N) in
           B / (INR N * k) + / k) 0.
Proof. exact: separation_lossy_vanishes. Qed.

(* The rate: for c > 0, B/(Nk) + 1/k = Theta(log N / sqrt N), with the
   explicit constants c/2 and c + 1 for every N >= 2. *)
Theorem proposition1_separation_rate (c : R) (N : nat) :
  0 < c -> (2 <= N)%N ->
  let k := INR (ceil_sqrt N) in
  let B := c * INR N * log2 (INR N) in
  c / 2 * log2 (INR N) / sqrt (INR N) <= B / (INR N * k) + / k
    <= (c + 1) * log2 (INR N) / sqrt (INR N).
Proof. exact: separation_rate. Qed.

(* The separation, in probabilities (App. B: "Feasibility needs the N handles
   plus one recovered block to fit, i.e. B >= c0 N log2 N + k for the
   constant c0 set by the handle encoding [...] at k = ceil(sqrt N) and
   B = c N log2 N with c > c0 [...] VISTA is feasible and stays at success 1,
   while [...] the lossy success probability tends to 0 and the gap tends to
   1").  c0 is the handle encoding's constant, so c0 >= 1: h-bit handles name
   N blocks apart only if N <= 2^h (proposition1_recovering_store), i.e.
   h >= log2 N, and below c0 = 1 part (i) would quantify over no store once
   N is large (the premise N h <= c0 N log2 N fails); for every c0 >= 1 such
   stores exist for arbitrarily large N (proposition1_separation_nonvacuous).
   1 <= c0 < c, k = ceil(sqrt N),
   B = c N log2 N, blocks of k bits (K = 2^k), instruction of at most s0 bits,
   handle table of at most c0 N log2 N bits, integer budget floor(B):
   (i)  for all large N the recovering method, with ANY lossless payload store
        (see proposition1_recovering), fits the budget (instruction + N
        handles + one block <= floor(B)) and is correct with probability 1;
   (ii) for every eps > 0 and all large N, EVERY lossy method (any state R
        with H(R) <= B, any guess g(R, i_star)) is correct with probability
        at most eps;
   and the gap 1 - (B/(Nk) + 1/k) between the two tends to 1. *)
Theorem proposition1_separation (c0 c s0 : R) :
  1 <= c0 < c -> 0 <= s0 ->
  let k N := ceil_sqrt N in
  let B N := c * INR N * log2 (INR N) in
  (exists N0 : nat, forall (N : nat) (S : finType)
       (pXR : {ffun 'I_N -> 'I_(2 ^ k N)} -> S -> R) (s_instr h Bn : nat)
       (Store : Type) (write : {ffun 'I_N -> 'I_(2 ^ k N)} -> Store)
       (handle : {ffun 'I_N -> 'I_(2 ^ k N)} -> 'I_N -> 'I_(2 ^ h))
       (read : Store -> 'I_(2 ^ h) -> option 'I_(2 ^ k N)),
     (N0 <= N)%N -> is_joint pXR ->
     (forall x i, read (write x) (handle x i) = Some (x i)) ->
     INR s_instr <= s0 -> INR (N * h) <= c0 * INR N * log2 (INR N) ->
     INR Bn <= B N < INR Bn + 1 ->
     (s_instr + N * h + k N <= Bn)%N /\
     (/ INR N * \sum_i \sum_(x : {ffun 'I_N -> 'I_(2 ^ k N)}) \sum_s
         (if read (write x) (handle x i) == Some (x i) then pXR x s else 0)) = 1) /\
  (forall eps : R, 0 < eps -> exists N0 : nat, forall (N : nat) (S : finType)
       (pXR : {ffun 'I_N -> 'I_(2 ^ k N)} -> S -> R) (g : S -> 'I_N -> 'I_(2 ^ k N)),
     (N0 <= N)%N -> is_joint pXR -> (forall x, marg1 pXR x = / INR ((2 ^ k N) ^ N)) ->
     H (marg2 pXR) <= B N ->
     ((/ INR N * \sum_i \sum_(x : {ffun 'I_N -> 'I_(2 ^ k N)}) \sum_s
         (if g s i == x i then pXR x s else 0)) <= eps)%R) /\
  Un_cv (fun N => 1 - (B N / (INR N * INR (k N)) + / INR (k N))) 1.
Proof.
move=> [c01 cc0] s00 k B.
have c00 : 0 <= c0 by lra.
have c0p : 0 <= c by lra.
have lossy := separation_lossy_vanishes c0p.
split.
  have [N0 feas] := separation_feasible (conj c00 cc0) s00.
  exists (maxn N0 1) => N S pXR s_instr hb Bn Store write handle read.
  rewrite geq_max => /andP [NN0 N1] pj lossless si sh [_ Bup].
  have fit : (s_instr + N * hb + k N <= Bn)%N.
    have h := feas N NN0.
    have : INR (s_instr + N * hb + k N) < INR Bn.+1.
      rewrite !plus_INR S_INR; rewrite /B in Bup; rewrite /k; lra.
    by move/INR_lt/ltP.
  split=> //.
  by have [_ ->] := proposition1_recovering N1 pj lossless fit.
split.
  move=> eps eps0.
  have [N1 hN1] := lossy eps eps0.
  exists (maxn N1 1) => N S pXR g.
  rewrite geq_max => /andP [NN1 N0] pj xu HB.
  have k0 : (0 < k N)%N by exact: ceil_sqrt_pos.
  have P1 := @proposition1 N (k N) S pXR g (B N) N0 k0 pj xu HB; cbv zeta in P1.
  apply: (Rle_trans _ _ _ P1).
  have := hN1 N (elimT leP NN1).
  rewrite /R_dist Rminus_0_r => /Rabs_def2 [h _]; rewrite /B /k; lra.
move=> eps eps0.
have [N1 hN1] := lossy eps eps0.
exists N1 => N NN1; have := hN1 N NN1.
rewrite /R_dist Rminus_0_r (_ : forall u, 1 - u - 1 = - u); last by move=> u; ring.
by rewrite Rabs_Ropp.
Qed.

(* Part (i) of proposition1_separation is not vacuous on its domain c0 >= 1:
   for every N0 there is N >= N0 (N = 2^m, m >= N0) with a lossless store,
   for blocks of any alphabet size K, whose h-bit handles cost
   N h <= c0 N log2 N bits (h = m = log2 N: the archive indexed by the
   handle, read back by decoding it). *)
Theorem proposition1_separation_nonvacuous (c0 : R) (K : nat) :
  1 <= c0 ->
  forall N0 : nat, exists (N h : nat) (write : {ffun 'I_N -> 'I_K} -> {ffun 'I_N -> 'I_K})
      (handle : {ffun 'I_N -> 'I_K} -> 'I_N -> 'I_(2 ^ h))
      (read : {ffun 'I_N -> 'I_K} -> 'I_(2 ^ h) -> option 'I_K),
    (N0 <= N)%N /\ (forall x i, read (write x) (handle x i) = Some (x i)) /\
    INR (N * h) <= c0 * INR N * log2 (INR N).
Proof.
move=> c01 N0.
have Nh : (2 ^ N0 <= 2 ^ N0)%N by [].
exists (2 ^ N0)%N, N0, id, (fun _ (i : 'I_(2 ^ N0)) => widen_ord Nh i),
  (fun s (a : 'I_(2 ^ N0)) => if insub (nat_of_ord a) is Some i then Some (s i) else None).
split; first exact: ltnW (ltn_expl N0 (ltnSn 1)).
split.
  move=> x i /=; rewrite (insubT (fun m => (m < 2 ^ N0)%N) (ltn_ord i)) /=.
  by congr (Some (x _)); apply: val_inj.
have e : log2 (INR (2 ^ N0)) = INR N0.
  have -> : INR (2 ^ N0) = 2 ^ N0.
    by elim: N0 {Nh} => [|m IH] //=; rewrite expnS mult_INR IH.
  rewrite /log2 ln_pow; last lra.
  by field; have := ln2_pos; lra.
rewrite mult_INR e.
have p : 0 <= INR (2 ^ N0) * INR N0 by apply: Rmult_le_pos; apply: pos_INR.
nra.
Qed.

(* ---------------------------------------------------------------------- *)
(* Proposition 2 for a finite observation alphabet W.  J* uniform, W ~ P_j
   given J* = j.  Step 1: I = 1/(n ln 2) sum_j KL(P_j || Pbar). *)
Theorem proposition2_mixture (n : nat) (W : finType) (P : 'I_n -> W -> R) :
  (0 < n)%N -> (forall j, is_dist (P j)) ->
  let Pbar w := / INR n * \sum_k P k w in
  MI (fun j w => / INR n * P j w) = / (INR n * ln 2) * \sum_j KL (P j) Pbar.
Proof. by move=> n0 Pd Pbar; exact: (MI_mixture_KL n0 Pd). Qed.

(* Tight route: I <= 1/(n ln 2) sum_j KL(P_j || Q) for every Q. *)
Theorem proposition2_tight (n : nat) (W : finType) (P : 'I_n -> W -> R) (Q : W -> R) :
  (0 < n)%N -> (forall j, is_dist (P j)) ->
  let Pbar w := / INR n * \sum_k P k w in
  (forall w, 0 <= Q w) -> \sum_w Q w <= 1 -> (forall w, 0 < Pbar w -> 0 < Q w) ->
  MI (fun j w => / INR n * P j w) <= / (INR n * ln 2) * \sum_j KL (P j) Q.
Proof. by move=> n0 Pd Pbar; exact: (MI_le_KL_any n0 Pd). Qed.

(* The tighter variant (prop2-tight), FOR A FINITE CHANNEL: against a
   reference Q, if KL(P_j || Q) is at most (1 - 1/n)(ln kappa)^2/(2 sigma^2)
   for every j (a NAMED PREMISE, gaussian_kl_Q; for the paper's continuous
   channel see proposition2_gaussian_tight below), then I <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2). *)
Theorem proposition2_tight_gaussian (n : nat) (W : finType) (P : 'I_n -> W -> R)
    (Q : W -> R) (kappa sigma : R) :
  (0 < n)%N -> (forall j, is_dist (P j)) -> 0 < sigma ->
  let Pbar w := / INR n * \sum_k P k w in
  (forall w, 0 <= Q w) -> \sum_w Q w <= 1 -> (forall w, 0 < Pbar w -> 0 < Q w) ->
  forall gaussian_kl_Q :
    (forall j, KL (P j) Q <= (1 - / INR n) * (ln kappa) ^ 2 / (2 * sigma ^ 2)),
  MI (fun j w => / INR n * P j w)
    <= (1 - / INR n) * ln 2 * (log2 kappa) ^ 2 / (2 * sigma ^ 2).
Proof. by move=> n0 Pd s0 Pbar; exact: (prop2_tight_gaussian n0 Pd s0). Qed.

(* Proposition 2, Steps 1-3, FOR A FINITE CHANNEL (the paper's continuous
   Gaussian channel is proposition2_gaussian below): if every pairwise divergence
   is at most the Gaussian value, KL(P_j || P_k) <= (ln kappa)^2 / sigma^2
   for j <> k (a NAMED PREMISE, gaussian_kl, not an axiom), then
   I(J*; W) <= (log2 kappa)^2 ln 2 / sigma^2. *)
Theorem proposition2_content (n : nat) (W : finType) (P : 'I_n -> W -> R)
    (kappa sigma : R) :
  (0 < n)%N -> (forall j, is_dist (P j)) ->
  (forall j k w, 0 < P j w -> 0 < P k w) ->
  0 < sigma ->
  forall gaussian_kl : (forall j k, j <> k -> KL (P j) (P k) <= (ln kappa) ^ 2 / sigma ^ 2),
  MI (fun j w => / INR n * P j w) <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
Proof. by move=> n0 Pd cs s0 gk; exact: (prop2_content n0 Pd cs s0 gk). Qed.

(* Proposition 2 for ANY observation W (values in any space, I(J*; W) = sup
   over finite quantisations), reduced to one premise: every finite
   quantisation q(W) of the channel has pairwise divergences at most the
   Gaussian value (ln kappa)^2 / sigma^2 (and common support).  For the
   paper's Gaussian channel this premise is data processing of the
   divergence plus its closed form, which are NOT proved here (measure
   theory); with it, I(J*; W) <= (log2 kappa)^2 ln 2 / sigma^2. *)
Theorem proposition2_any_observation (n : nat) (TW : Type) (L : obs_law n TW)
    (kappa sigma : R) :
  (0 < n)%N -> 0 < sigma -> (forall j, qlaw L (fun _ : TW => tt) j tt = / INR n) ->
  let P (T : finType) (q : TW -> T) (j : 'I_n) (t : T) := INR n * qlaw L q j t in
  (forall (T : finType) (q : TW -> T) j k t, qadm L q -> 0 < P T q j t -> 0 < P T q k t) ->
  (forall (T : finType) (q : TW -> T) j k, qadm L q -> j <> k ->
     KL (P T q j) (P T q k) <= (ln kappa) ^ 2 / sigma ^ 2) ->
  MIobs L <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
Proof.
move=> n0 s0 ju P cs gk; apply: MIobs_least => T q aq.
have nR : 0 < INR n by apply: lt_0_INR; apply/ltP.
have pj := qlaw_joint aq.
have Pd : forall j, is_dist (P T q j).
  move=> j; split=> [t|]; first by apply: Rmult_le_pos; [lra | exact: pj.1].
  rewrite /P sumR_scal -/(marg1 (qlaw L q) j) marg1_qlaw ?ju //; field; lra.
have -> : qlaw L q = (fun j t => / INR n * P T q j t).
  apply: functional_extensionality => j; apply: functional_extensionality => t.
  by rewrite /P; field; lra.
by apply: (prop2_content n0 Pd _ s0) => [j k t|j k]; [exact: cs | exact: gk].
Qed.

(* ---------------------------------------------------------------------- *)
(* Frontier (theory/FRONTIER.md).  Converse: for any (Y,U)-measurable order,
   I(J*; Y) >= log2 n - H(rank), P(rank = r) = Pr[J* = pi(Y,U)_r]. *)
Theorem frontier_rank (n : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU -> (0 < n)%N ->
  let rank_law r := \sum_y \sum_u pJY (pi y u r) y * pU u in
  log2 (INR n) - H rank_law <= MI pJY.
Proof. by move=> pj ju pu n0 rl; exact: (rate_ge_log_n_minus_H_rank pj ju pu n0 pi_inj). Qed.

(* The Gibbs law p_r ∝ exp(-lambda c_r), lambda >= 0, maximises entropy
   among laws with mean cost at most its own. *)
Theorem frontier_gibbs_maxent (T : finType) (c : T -> R) (lambda : R) (p : T -> R) :
  0 <= lambda -> (0 < #|T|)%N -> is_dist p ->
  let g t := exp (- lambda * c t) / \sum_s exp (- lambda * c s) in
  \sum_t p t * c t <= \sum_t g t * c t -> H p <= H g.
Proof. by move=> l0 ne pd g; exact: (gibbs_max_entropy l0 ne pd). Qed.

(* Together: with c_r = min(r - 1, kappa), every interface whose E[Z] is at
   most the Gibbs mean cost D_lambda has I(J*; Y) >= log2 n - H(g_lambda). *)
Theorem frontier_converse_gibbs (n kappa : nat) (Y U : finType)
    (pJY : 'I_n -> Y -> R) (pU : U -> R)
    (pi : Y -> U -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) (lambda : R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU -> (0 < n)%N ->
  0 <= lambda ->
  let c (r : 'I_n) := INR (minn r kappa) in
  let g r := exp (- lambda * c r) / \sum_s exp (- lambda * c s) in
  \sum_j \sum_y \sum_u pJY j y * pU u * INR (minn (invF (pi_inj y u) j) kappa)
    <= \sum_r g r * c r ->
  log2 (INR n) - H g <= MI pJY.
Proof.
by move=> pj ju pu n0 l0 c g; exact: (frontier_converse pj ju pu n0 l0).
Qed.

(* Achievability: every rank law p is attained by some interface (cyclic
   shifts), with I(J*; Y) = log2 n - H(p) and E[Z] = sum_r p_r min(r - 1, kappa).
   With frontier_rank and frontier_gibbs_maxent the frontier is exact:
   R*(D) = log2 n - max{H(p) : sum_r p_r c_r <= D}. *)
Theorem frontier_achievable (n kappa : nat) (p : 'I_n -> R) :
  (0 < n)%N -> is_dist p ->
  exists (pJY : 'I_n -> 'I_n -> R) (pi : 'I_n -> 'I_n -> 'I_n)
         (pi_inj : forall y, injective (pi y)),
    is_joint pJY /\ (forall j, marg1 pJY j = / INR n) /\
    MI pJY = log2 (INR n) - H p /\
    \sum_j \sum_y pJY j y * INR (minn (invF (pi_inj y) j) kappa)
      = \sum_r p r * INR (minn r kappa).
Proof.
move=> n0 pd.
exists (shift_joint n0 p), (fun s r => oadd n0 r s), (fun s => @oadd_inj_l n n0 s).
split; first exact: shift_joint_is_joint.
split; first exact: shift_uniform.
split; first exact: shift_rate.
exact: shift_EZ.
Qed.


(* ---------------------------------------------------------------------- *)
(* Proposition 2 for an observation W in a MEASURABLE SPACE (MeasObs.v,
   mathcomp-analysis): given J* = j, W has law P_j (a probability measure on
   X); J* is uniform on [n]; I(J*; W) is the supremum of I(J*; q(W)) over
   the finite quantisations q with measurable fibres.  Premise (App. C,
   Step 2, in likelihood-ratio form): for every pair j, k, P_k has density
   exp(-L_jk) with respect to P_j (L_jk P_j-integrable), and for j <> k the
   mean log-likelihood ratio E_{P_j}[L_jk] = KL(P_j || P_k) is at most
   (ln kappa)^2 / sigma^2.  Conclusion (Step 3):
   I(J*; W) <= (1 - 1/n) (log2 kappa)^2 ln 2 / sigma^2 <= (log2 kappa)^2 ln 2 / sigma^2.
   The divergences of the quantisations are PROVED (data processing,
   kl_data_processing), not assumed.  For the paper's Gaussian channel the
   premise holds with L_jk(w) = ln kappa (w_j - w_k) / sigma^2, and the
   n-dimensional Gaussian laws are proved to satisfy it below
   (gaussian_pairwise_divergence, proposition2_gaussian). *)
From mathcomp Require Import boolp classical_sets functions mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum.
From mathcomp Require Import measure lebesgue_measure lebesgue_integral numfun Rstruct.
From VistaLab Require Import MeasObs.

Section MeasurableChannel.
Local Open Scope classical_set_scope.
Local Open Scope ring_scope.
Local Open Scope R_scope.

(* Data processing of the divergence under finite measurable quantisation. *)
Theorem kl_data_processing d (X : measurableType d)
    (P Q : {measure set X -> \bar real_realType}) (L : X -> R) :
  P setT = 1%E -> Q setT = 1%E ->
  P.-integrable setT (EFin \o L) ->
  measurable_fun setT ((fun x => exp (- L x)) : X -> real_realType) ->
  (forall A, measurable A -> Q A = (\int[P]_(x in A) (exp (- L x))%:E)%E) ->
  forall (T : finType) (q : X -> T), (forall t, measurable (q @^-1` [set t])) ->
  KL (fun t => fine (P (q @^-1` [set t]))) (fun t => fine (Q (q @^-1` [set t])))
    <= fine (\int[P]_x (L x)%:E)%E.
Proof. by move=> P1 Q1 iL mE dQ T q mq; exact: (kl_quantised_le P1 Q1 iL mE dQ mq). Qed.

Theorem proposition2_measurable_tight d (X : measurableType d) (n : nat)
    (P : 'I_n -> {measure set X -> \bar real_realType})
    (P1 : forall j, P j setT = 1%E) (n0 : (0 < n)%N)
    (L : 'I_n -> 'I_n -> X -> R) (kappa sigma : R) :
  0 < sigma ->
  (forall j k, (P j).-integrable setT (EFin \o L j k)) ->
  (forall j k, measurable_fun setT ((fun x => exp (- L j k x)) : X -> real_realType)) ->
  (forall j k A, measurable A -> P k A = (\int[P j]_(x in A) (exp (- L j k x))%:E)%E) ->
  (forall j k, j <> k -> fine (\int[P j]_x (L j k x)%:E)%E <= (ln kappa) ^ 2 / sigma ^ 2) ->
  MIobs (meas_obs P1 n0) <= (1 - / INR n) * ((log2 kappa) ^ 2 / sigma ^ 2 * ln 2).
Proof. by move=> s0 iL mE dens mean; exact: (prop2_meas_tight P1 n0 iL mE dens s0 mean). Qed.

Theorem proposition2_measurable d (X : measurableType d) (n : nat)
    (P : 'I_n -> {measure set X -> \bar real_realType})
    (P1 : forall j, P j setT = 1%E) (n0 : (0 < n)%N)
    (L : 'I_n -> 'I_n -> X -> R) (kappa sigma : R) :
  0 < sigma ->
  (forall j k, (P j).-integrable setT (EFin \o L j k)) ->
  (forall j k, measurable_fun setT ((fun x => exp (- L j k x)) : X -> real_realType)) ->
  (forall j k A, measurable A -> P k A = (\int[P j]_(x in A) (exp (- L j k x))%:E)%E) ->
  (forall j k, j <> k -> fine (\int[P j]_x (L j k x)%:E)%E <= (ln kappa) ^ 2 / sigma ^ 2) ->
  MIobs (meas_obs P1 n0) <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
Proof.
move=> s0 iL mE dens mean.
have h := proposition2_measurable_tight P1 n0 s0 iL mE dens mean.
have l2 := ln2_pos.
have c0 : 0 <= (log2 kappa) ^ 2 / sigma ^ 2 * ln 2.
  apply: Rmult_le_pos; last lra.
  by rewrite /Rdiv; apply: Rmult_le_pos; [apply: pow2_ge_0 | left; apply: Rinv_0_lt_compat; nra].
have : 0 < / INR n by apply: Rinv_0_lt_compat; apply: lt_0_INR; apply/ssrnat.ltP.
nra.
Qed.

End MeasurableChannel.

(* ---------------------------------------------------------------------- *)
(* Proposition 2 for the paper's GAUSSIAN CHANNEL (App. C; GaussLebesgue.v,
   GaussMeasure.v, GaussN.v), with no premise about divergences.
   The channel: given J* = j (J* uniform on [n]) the observation
   W = (W_0, ..., W_{n-1}) has law gauss_chan s0 L l j on R^n, under which the
   coordinates are independent and W_i ~ N(m_i, sigma^2), i.e. W_i has density
   exp(-(x - m_i)^2 / (2 sigma^2)) / Z with respect to Lebesgue measure, where
   Z = int_R exp(-x^2 / (2 sigma^2)) dx (0 < Z < +oo; its value sqrt(2 pi) sigma
   is not needed), m_j = ln L (the bulky block) and m_i = ln l for i <> j.
   kappa = L / l.  I(J*; W) = MIobs: the supremum of I(J*; q(W)) over finite
   quantisations q with measurable fibres (MeasObs.v), in bits.
   The statement spells out the law of every measurable rectangle
   {W_0 in A_0, ..., W_{n-1} in A_{n-1}}, which determines the law of W. *)
From mathcomp Require Import all_ssreflect all_algebra boolp classical_sets functions mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum.
From mathcomp Require Import measure lebesgue_measure lebesgue_integral numfun Rstruct.
From VistaLab Require Import GaussLebesgue GaussMeasure GaussN GaussTight.

Section GaussianChannel.
Local Open Scope classical_set_scope.
Local Open Scope ring_scope.
Local Open Scope R_scope.
Local Notation leb := (@lebesgue_measure real_realType).

(* Coq's 0 < x as mathcomp's order, which GaussN.v's premises use. *)
Let pos_order (x : R) : 0 < x -> Order.lt 0 x.
Proof. by move=> x0; apply/RltP. Qed.

(* The law of a measurable rectangle under the channel, written out. *)
Lemma gauss_chan_rect (sigma L l : R) (n : nat) (s0 : Order.lt 0 sigma) (n0 : (0 < n)%N)
    (j : 'I_n) (A : nat -> set gauss_space) :
  (forall i, measurable (A i)) ->
  gauss_chan s0 L l j (\bigcap_(i < n) @coordn _ gauss_space n.-1 i @^-1` A i)
  = \big[*%E/1%E]_(i < n)
      (\int[leb]_(x in A i)
        (exp (- ((x - (if i == j :> nat then ln L else ln l))
                 * (x - (if i == j :> nat then ln L else ln l))) / (2 * (sigma * sigma)))
         / fine (\int[leb]_y (exp (- (y * y) / (2 * (sigma * sigma))))%:E)%E)%:E)%E.
Proof.
move=> mA.
have nn : n.-1.+1 = n by rewrite prednK.
have := gauss_chan_indep s0 L l j mA; rewrite nn => ->.
apply: eq_bigr => i _; rewrite gaussE; last exact: mA.
apply: eq_integral => x _; congr (_%:E).
rewrite /gauss_density /gauss_kernel /chan_means RdivE; last first.
  by apply/eqP; exact: (gauss_Z_neq0 s0).
by rewrite !RminusE.
Qed.

Theorem proposition2_gaussian (sigma L l : R) (n : nat) (s0 : Order.lt 0 sigma) (n0 : (0 < n)%N) :
  0 < l -> 0 < L ->
  let Z := (\int[leb]_x (exp (- (x * x) / (2 * (sigma * sigma))))%:E)%E in
  let m (j : 'I_n) (i : nat) := if i == j :> nat then ln L else ln l in
  (0 < Z)%E /\ (Z < +oo)%E /\
  (forall (j : 'I_n) (A : nat -> set gauss_space), (forall i, measurable (A i)) ->
     gauss_chan s0 L l j (\bigcap_(i < n) @coordn _ gauss_space n.-1 i @^-1` A i)
     = \big[*%E/1%E]_(i < n)
         (\int[leb]_(x in A i)
           (exp (- ((x - m j i) * (x - m j i)) / (2 * (sigma * sigma))) / fine Z)%:E)%E) /\
  MIobs (meas_obs (gauss_chan_prob s0 L l) n0) <= (log2 (L / l)) ^ 2 / sigma ^ 2 * ln 2.
Proof.
move=> l0 L0 Z m; split; first exact: (gauss_integral_gt0 s0).
split; first exact: (gauss_integral_fin s0).
split; first by move=> j A mA; exact: gauss_chan_rect.
exact: (prop2_gaussian_loose s0 n0 (pos_order l0) (pos_order L0)).
Qed.

(* Step 3 before its last inequality: the factor n(n-1)/n^2 = 1 - 1/n kept. *)
Theorem proposition2_gaussian_step3 (sigma L l : R) (n : nat) (s0 : Order.lt 0 sigma)
    (n0 : (0 < n)%N) :
  0 < l -> 0 < L ->
  MIobs (meas_obs (gauss_chan_prob s0 L l) n0)
    <= (1 - / INR n) * ((log2 (L / l)) ^ 2 / sigma ^ 2 * ln 2).
Proof.
move=> l0 L0; exact: (prop2_gaussian s0 n0 (pos_order l0) (pos_order L0)).
Qed.

(* The tighter variant (vista-lab's prop2-tight; App. C's channel): against the
   reference law Q = N(mbar, sigma^2)^n, mbar = (ln L + (n - 1) ln l) / n the mean
   of the n means, KL(P_j || Q) = (1 - 1/n) (ln kappa)^2 / (2 sigma^2) for every j,
   so I(J*; W) <= (1 - 1/n) ln 2 (log2 kappa)^2 / (2 sigma^2): half of Step 3's
   bound, with no premise on divergences. *)
Theorem proposition2_gaussian_tight (sigma L l : R) (n : nat) (s0 : Order.lt 0 sigma)
    (n0 : (0 < n)%N) :
  0 < l -> 0 < L ->
  MIobs (meas_obs (gauss_chan_prob s0 L l) n0)
    <= (1 - / INR n) * ln 2 * (log2 (L / l)) ^ 2 / (2 * sigma ^ 2).
Proof.
move=> l0 L0; exact: (prop2_gaussian_tight s0 n0 (pos_order l0) (pos_order L0)).
Qed.

(* Step 2 for that channel, proved: P_k has density exp(-L_jk) with respect to
   P_j, and KL(P_j || P_k) = E_{P_j}[L_jk] = (ln kappa)^2 / sigma^2 for j <> k. *)
Theorem gaussian_pairwise_divergence (sigma L l : R) (n : nat) (s0 : Order.lt 0 sigma)
    (j k : 'I_n) :
  0 < l -> 0 < L -> j <> k ->
  let P := gauss_chan s0 L l in
  exists Ljk : Rn gauss_space n.-1 -> R,
    (P j).-integrable setT (EFin \o Ljk) /\
    (forall A, measurable A -> P k A = (\int[P j]_(x in A) (exp (- Ljk x))%:E)%E) /\
    fine (\int[P j]_x (Ljk x)%:E)%E = (ln (L / l)) ^ 2 / sigma ^ 2.
Proof.
move=> l0 L0 jk P.
have s0R : 0 < sigma by apply/RltP.
have n0 : (0 < n)%N := leq_ltn_trans (leq0n j) (ltn_ord j).
eexists; split.
  exact: (chan_llr_integrable (gauss_prob s0) (@gauss_change sigma) (gauss_llr_integrable s0)
            (@gauss_llr_measurable sigma) (gauss_llr_mean s0) L l j k).
split.
  move=> A mA; exact: (chan_change (gauss_prob s0) (@gauss_change sigma)
            (gauss_llr_integrable s0) (@gauss_llr_measurable sigma) (gauss_llr_mean s0) L l j k mA).
apply: (chan_llr_mean (gauss_prob s0) (@gauss_change sigma) (gauss_llr_integrable s0)
          (@gauss_llr_measurable sigma) (gauss_llr_mean s0) s0R n0 l0 L0).
by apply/eqP.
Qed.

End GaussianChannel.
