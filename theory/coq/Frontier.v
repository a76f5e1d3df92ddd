(* The exact frontier (theory/FRONTIER.md), converse half:
     I(J*; Y) >= log2 n - H(rank)       for any (Y,U)-measurable order,
   where rank = position of J* in the order, and
     E[Z] = sum_r P(rank = r) min(r - 1, kappa),
   and the Gibbs law g_lambda(r) ∝ exp(-lambda c_r), lambda >= 0, maximises
   entropy among laws whose mean cost is at most its own.  Together: every
   interface with E[Z] <= D_lambda := sum_r g_lambda(r) c_r has
   I(J*; Y) >= log2 n - H(g_lambda). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq div.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy ListFano Theorem1.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* Entropy is invariant under relabelling by a bijection. *)
Lemma H_relabel (T : finType) (q : T -> R) (f : T -> T) :
  injective f -> H (fun t => q (f t)) = H q.
Proof. by move=> inj; rewrite /H [in RHS](reindex_inj inj). Qed.

(* Conditioning reduces entropy: H(A | B) <= H(A). *)
Lemma condH_le_H (A B : finType) (p : A -> B -> R) :
  is_joint p -> condH p <= H (marg1 p).
Proof.
move=> pj.
have m1d := marg1_dist pj.
have supp : forall b a, 0 < marg2 p b -> 0 < post p b a -> 0 < marg1 p a.
  move=> b a mb pa.
  have : 0 < marg2 p b * post p b a by apply: Rmult_lt_0_compat.
  rewrite (marg2_post a b pj) => h.
  by apply: (Rlt_le_trans _ (p a b)) => //; apply: leR_sum_term => b'; exact: pj.1.
apply: (Rle_trans _ (\sum_b marg2 p b * crossH (post p b) (marg1 p))).
  apply: condH_le => // b mb; apply: gibbs.
  - exact: post_dist.
  - exact: m1d.1.
  - by move=> a; apply: supp.
  - by rewrite m1d.2; lra.
rewrite /crossH /H.
have -> : \sum_b marg2 p b * - (\sum_a post p b a * log2 (marg1 p a))
        = - (\sum_b \sum_a p a b * log2 (marg1 p a)).
  rewrite -sumR_opp; apply: eq_bigr => b _.
  have -> : forall x y : R, x * - y = - (x * y) by move=> *; ring.
  rewrite -sumR_scal; congr (- _); apply: eq_bigr => a _.
  by rewrite -Rmult_assoc (marg2_post a b pj).
rewrite exchange_big /=; apply: Req_le; congr (- _); apply: eq_bigr => a _.
by rewrite sumR_scar.
Qed.

Section Converse.
Variables n kappa : nat.
Variables TY TU : finType.
Variable pJY : 'I_n -> TY -> R.
Hypothesis pJY_joint : is_joint pJY.
Hypothesis J_uniform : forall j, marg1 pJY j = / INR n.
Variable pU : TU -> R.
Hypothesis pU_dist : is_dist pU.
Hypothesis n_pos : (0 < n)%N.
Variable pi : TY -> TU -> 'I_n -> 'I_n.
Hypothesis pi_inj : forall y u, injective (pi y u).

(* Law of the rank: P(rank = r) = P(J* = pi(Y,U)_r). *)
Definition rank_law (r : 'I_n) := \sum_y \sum_u pJY (pi y u r) y * pU u.

(* Joint law of (rank, (Y,U)). *)
Definition pRYU (r : 'I_n) (yu : TY * TU) := indep_joint pJY pU (pi yu.1 yu.2 r) yu.

Let pj3 := indep_joint_is_joint pJY_joint pU_dist.

Lemma pRYU_joint : is_joint pRYU.
Proof.
split=> [r yu|]; first exact: pj3.1.
rewrite exchange_big /= -pj3.2 [RHS]exchange_big /=; apply: eq_bigr => yu _.
by rewrite /pRYU [in RHS](reindex_inj (@pi_inj yu.1 yu.2)).
Qed.

Lemma marg1_pRYU r : marg1 pRYU r = rank_law r.
Proof. by rewrite /marg1 /rank_law sumR_pair. Qed.

Lemma condH_pRYU : condH pRYU = condH (indep_joint pJY pU).
Proof.
apply: eq_bigr => yu _.
have m : marg2 pRYU yu = marg2 (indep_joint pJY pU) yu.
  by rewrite /marg2 /pRYU [in RHS](reindex_inj (@pi_inj yu.1 yu.2)).
rewrite m; congr (_ * _).
rewrite -[RHS](H_relabel _ (@pi_inj yu.1 yu.2)); apply: H_ext => r.
by rewrite /post m.
Qed.

(* Converse: I(J*; Y) >= log2 n - H(rank). *)
Theorem rate_ge_log_n_minus_H_rank : log2 (INR n) - H rank_law <= MI pJY.
Proof.
have e : log2 (INR n) - MI pJY = condH (indep_joint pJY pU).
  rewrite condH_indep // /MI.
  have n0 : (0 < #|'I_n|)%N by rewrite card_ord.
  rewrite (H_ext (q' := fun _ => / INR #|'I_n|)); last by move=> j; rewrite J_uniform card_ord.
  by rewrite H_uniform // card_ord; ring.
have : condH pRYU <= H (marg1 pRYU) by apply: condH_le_H; exact: pRYU_joint.
rewrite condH_pRYU -e (H_ext marg1_pRYU); lra.
Qed.

(* E[Z] = sum_r P(rank = r) min(r - 1, kappa) (ranks 0-based here). *)
Theorem EZ_rank_law :
  EZ kappa pJY pU pi_inj = \sum_r rank_law r * INR (minn r kappa).
Proof.
rewrite /EZ exchange_big /=.
rewrite (eq_bigr (fun y => \sum_u \sum_j w pJY pU j y u * INR (Z kappa pi_inj y u j))); last first.
  by move=> y _; rewrite exchange_big.
have e : forall y u, \sum_j w pJY pU j y u * INR (Z kappa pi_inj y u j)
               = \sum_r pJY (pi y u r) y * pU u * INR (minn r kappa).
  move=> y u; rewrite (reindex_inj (@pi_inj y u)); apply: eq_bigr => r _.
  by rewrite /Z /tau0 invF_f.
rewrite (eq_bigr (fun y => \sum_u \sum_r pJY (pi y u r) y * pU u * INR (minn r kappa))); last first.
  by move=> y _; apply: eq_bigr => u _; exact: e.
rewrite (eq_bigr (fun y => \sum_r \sum_u pJY (pi y u r) y * pU u * INR (minn r kappa))); last first.
  by move=> y _; rewrite exchange_big.
rewrite exchange_big /=; apply: eq_bigr => r _.
by rewrite /rank_law -sumR_scar; apply: eq_bigr => y _; rewrite -sumR_scar.
Qed.

End Converse.

(* ------------------------------------------------------------------ *)
(* Maximum entropy under a linear cost constraint.                       *)

Section Gibbs.
Variable T : finType.
Variable c : T -> R.
Variable lambda : R.
Hypothesis lambda_ge0 : 0 <= lambda.
Hypothesis T_nonempty : (0 < #|T|)%N.

Definition Zpart := \sum_t exp (- lambda * c t).
Definition gibbs_law (t : T) := exp (- lambda * c t) / Zpart.

Lemma Zpart_pos : 0 < Zpart.
Proof.
have /card_gt0P [t0 _] := T_nonempty.
apply: (Rlt_le_trans _ (exp (- lambda * c t0))); first exact: exp_pos.
by apply: leR_sum_term => t; left; exact: exp_pos.
Qed.

Lemma gibbs_pos t : 0 < gibbs_law t.
Proof. by apply: Rdiv_lt_0_compat; [exact: exp_pos | exact: Zpart_pos]. Qed.

Lemma gibbs_dist : is_dist gibbs_law.
Proof.
have zp := Zpart_pos.
split=> [t|]; first by left; exact: gibbs_pos.
by rewrite /gibbs_law /Rdiv sumR_scar -/Zpart Rinv_r //; lra.
Qed.

Lemma crossH_gibbs (p : T -> R) : is_dist p ->
  crossH p gibbs_law = (lambda * (\sum_t p t * c t) + ln Zpart) / ln 2.
Proof.
move=> [p0 p1]; have zp := Zpart_pos; have l2 := ln2_pos.
rewrite /crossH /gibbs_law.
have e : forall t, p t * log2 (exp (- lambda * c t) / Zpart)
                 = - (lambda * (p t * c t) + p t * ln Zpart) / ln 2.
  move=> t; rewrite /log2 ln_div'; [|exact: exp_pos|exact: zp]; rewrite ln_exp; field; lra.
rewrite (eq_bigr _ (fun t _ => e t)).
rewrite /Rdiv sumR_scar sumR_opp big_split /= sumR_scal sumR_scar p1; field; lra.
Qed.

(* The Gibbs law maximises entropy among laws with mean cost <= its own. *)
Theorem gibbs_max_entropy (p : T -> R) :
  is_dist p -> \sum_t p t * c t <= \sum_t gibbs_law t * c t -> H p <= H gibbs_law.
Proof.
move=> pd cost; have l2 := ln2_pos.
apply: (Rle_trans _ (crossH p gibbs_law)).
  apply: gibbs => //; [by move=> t; left; exact: gibbs_pos | by move=> t _; exact: gibbs_pos |].
  by rewrite gibbs_dist.2; lra.
have -> : H gibbs_law = crossH gibbs_law gibbs_law by [].
rewrite !crossH_gibbs //; last exact: gibbs_dist.
apply: Rmult_le_compat_r; first by left; apply: Rinv_0_lt_compat.
have := Rmult_le_compat_l _ _ _ lambda_ge0 cost; lra.
Qed.

End Gibbs.

(* ------------------------------------------------------------------ *)
(* The frontier converse with the make-room cost c_r = min(r - 1, kappa). *)

Definition mr_cost (n kappa : nat) (r : 'I_n) : R := INR (minn r kappa).

Theorem frontier_converse n kappa (TY TU : finType) (pJY : 'I_n -> TY -> R) (pU : TU -> R)
    (pi : TY -> TU -> 'I_n -> 'I_n) (pi_inj : forall y u, injective (pi y u)) (lambda : R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU -> (0 < n)%N ->
  0 <= lambda ->
  EZ kappa pJY pU pi_inj <= \sum_r gibbs_law (@mr_cost n kappa) lambda r * @mr_cost n kappa r ->
  log2 (INR n) - H (gibbs_law (@mr_cost n kappa) lambda) <= MI pJY.
Proof.
move=> pj ju pu n0 l0 hz.
have ne : (0 < #|'I_n|)%N by rewrite card_ord.
apply: (Rle_trans _ (log2 (INR n) - H (rank_law pJY pU pi))); last first.
  exact: rate_ge_log_n_minus_H_rank.
have rd : is_dist (rank_law pJY pU pi).
  have := marg1_dist (pRYU_joint pj pu pi_inj); case=> h s.
  by split=> [r|]; [rewrite -marg1_pRYU | rewrite -s; apply: eq_bigr => r _; rewrite marg1_pRYU].
have : H (rank_law pJY pU pi) <= H (gibbs_law (@mr_cost n kappa) lambda).
  apply: gibbs_max_entropy => //.
  by rewrite -(EZ_rank_law kappa pJY pU pi_inj).
lra.
Qed.

(* ------------------------------------------------------------------ *)
(* Achievability: every rank law is attained.  Given a law p on ranks, the
   interface announces the cyclic shift Y = J* - R (mod n) with R ~ p drawn
   independently of J*, and the agent archives in the order
   r |-> r + Y (mod n).  Then the rank of J* is R, the posterior of J* given
   Y is a relabelling of p, so I(J*; Y) = log2 n - H(p) and
   E[Z] = sum_r p_r min(r, kappa).  (FRONTIER.md uses uniformly random
   permutations; any transitive group of orders works, cyclic shifts are the
   smallest.)  With the converse this makes the frontier exact. *)

Section Achievability.
Variable n : nat.
Hypothesis n_pos : (0 < n)%N.

Definition oadd (r s : 'I_n) : 'I_n := Ordinal (ltn_pmod (r + s) n_pos).
Definition osub (j s : 'I_n) : 'I_n := Ordinal (ltn_pmod (j + (n - s)) n_pos).

Lemma oadd_osub j s : oadd (osub j s) s = j.
Proof.
apply: val_inj => /=; rewrite modnDml -addnA subnK ?(ltnW (ltn_ord s)) //.
by rewrite modnDr modn_small.
Qed.

Lemma osub_inj_l s : injective (fun j => osub j s).
Proof. by apply: (can_inj (g := fun r => oadd r s)) => j; exact: oadd_osub. Qed.

Lemma oadd_inj_l s : injective (fun r => oadd r s).
Proof.
move=> r1 r2 /(congr1 val) /= /eqP.
rewrite eqn_modDr (modn_small (ltn_ord r1)) (modn_small (ltn_ord r2)) => /eqP e.
exact: val_inj.
Qed.

Lemma osub_inj_r j : injective (fun s => osub j s).
Proof.
move=> s1 s2 /= e.
have h : oadd (osub j s1) s1 = oadd (osub j s1) s2 by rewrite oadd_osub e oadd_osub.
move/(congr1 val): h => /= /eqP.
rewrite eqn_modDl (modn_small (ltn_ord s1)) (modn_small (ltn_ord s2)) => /eqP e2.
exact: val_inj.
Qed.

Lemma sum_reindex (f : 'I_n -> 'I_n) (F : 'I_n -> R) :
  injective f -> \sum_i F (f i) = \sum_i F i.
Proof. by move=> inj; rewrite [RHS](reindex_inj inj). Qed.

Variable p : 'I_n -> R.
Hypothesis p_dist : is_dist p.

Let nR : 0 < INR n.
Proof. by apply: lt_0_INR; apply/ltP. Qed.

(* The interface: Y = J* - R. *)
Definition shift_joint (j s : 'I_n) := / INR n * p (osub j s).

Lemma shift_joint_is_joint : is_joint shift_joint.
Proof.
split=> [j s|]; first by apply: Rmult_le_pos; [left; apply: Rinv_0_lt_compat | exact: p_dist.1].
rewrite (eq_bigr (fun _ => / INR n)); last first.
  move=> j _; rewrite /shift_joint sumR_scal.
  by rewrite (sum_reindex p (@osub_inj_r j)) p_dist.2 Rmult_1_r.
by rewrite sumR_constT card_ord Rinv_r //; lra.
Qed.

Lemma shift_uniform j : marg1 shift_joint j = / INR n.
Proof.
rewrite /marg1 /shift_joint sumR_scal.
by rewrite (sum_reindex p (@osub_inj_r j)) p_dist.2 Rmult_1_r.
Qed.

Lemma shift_marg2 s : marg2 shift_joint s = / INR n.
Proof.
rewrite /marg2 /shift_joint sumR_scal.
by rewrite (sum_reindex p (@osub_inj_l s)) p_dist.2 Rmult_1_r.
Qed.

(* I(J*; Y) = log2 n - H(p). *)
Theorem shift_rate : MI shift_joint = log2 (INR n) - H p.
Proof.
have n0 : (0 < #|'I_n|)%N by rewrite card_ord.
rewrite /MI (H_ext (q' := fun _ => / INR #|'I_n|)); last by move=> j; rewrite shift_uniform card_ord.
rewrite H_uniform // card_ord; congr (_ - _).
rewrite /condH (eq_bigr (fun _ => / INR n * H p)); last first.
  move=> s _; rewrite shift_marg2; congr (_ * _).
  rewrite -(H_relabel p (@osub_inj_l s)); apply: H_ext => j.
  by rewrite /post shift_marg2 /shift_joint; field; lra.
by rewrite sumR_constT card_ord; field; lra.
Qed.

(* Archiving in the announced order r |-> r + Y puts J* at rank R, so
   E[Z] = sum_r p_r min(r, kappa). *)
Theorem shift_EZ kappa :
  \sum_j \sum_s shift_joint j s * INR (minn (invF (@oadd_inj_l s) j) kappa)
    = \sum_r p r * INR (minn r kappa).
Proof.
have pos : forall j s, invF (@oadd_inj_l s) j = osub j s.
  by move=> j s; rewrite -{1}(oadd_osub j s) (invF_f (@oadd_inj_l s)).
rewrite exchange_big /=.
rewrite (eq_bigr (fun _ => / INR n * \sum_r p r * INR (minn r kappa))); last first.
  move=> s _; rewrite (reindex_inj (@oadd_inj_l s)) /= -sumR_scal; apply: eq_bigr => r _.
  have e : osub (oadd r s) s = r by apply: (@oadd_inj_l s); rewrite /= oadd_osub.
  by rewrite pos /shift_joint e Rmult_assoc.
by rewrite sumR_constT card_ord -Rmult_assoc Rinv_r ?Rmult_1_l //; lra.
Qed.

End Achievability.

