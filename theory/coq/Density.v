(* The measure with a density: for a measure mu on T and a measurable
   f : T -> R with f >= 0, density_meas mu mf f0 is the measure
   A |-> int_A f dmu (Radon-Nikodym derivative f with respect to mu).
   Contents:
   - density_meas (D1) with its measure instance, density_measE;
   - integral_density (D2): int_A g d(f.mu) = int_A g f dmu for every
     nonnegative measurable g : T -> \bar R (indicators from the definition,
     simple functions by linearity, the general case by approximation and
     monotone convergence, as for integral_pushforward / ge0_integral_mscale
     in mathcomp-analysis);
   - integral_density_real: the same for every measurable g : T -> R
     (positive and negative parts); integrable_density: a measurable g is
     (f.mu)-integrable iff g f is mu-integrable; integral_density_fin.
   Uses mathcomp-analysis 0.6.0 over Coq's reals (Rstruct). *)

From HB Require Import structures.
From Coq Require Import Reals.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality fsbigop mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Definition density_meas d (T : measurableType d)
    (mu : {measure set T -> \bar real_realType}) (f : T -> R)
    (mf : measurable_fun setT (f : T -> real_realType))
    (f0 : forall x, 0 <= f x) (A : set T) : \bar real_realType :=
  (\int[mu]_(x in A) (f x)%:E)%E.

Section density_measure.
Local Open Scope ereal_scope.
Context d (T : measurableType d) (mu : {measure set T -> \bar real_realType}).
Variable f : T -> R.
Hypotheses (mf : measurable_fun setT (f : T -> real_realType))
  (f0 : forall x, (0 <= f x)%R).

Notation dm := (density_meas mu mf f0).

Let dm0 : dm set0 = 0.
Proof. by rewrite /density_meas integral_set0. Qed.

Let dm_ge0 A : 0 <= dm A.
Proof. by apply: integral_ge0 => x _; rewrite lee_fin. Qed.

Lemma density_patchE (A : set T) x :
  ((EFin \o f) \_ A) x = (f x)%:E * (\1_A x)%:E.
Proof.
by rewrite /patch indicE; case: ifPn => _ /=; rewrite ?mule1 ?mule0.
Qed.

Let dm_sigma_additive : semi_sigma_additive dm.
Proof.
move=> F mF tF mUF; have -> : dm (\bigcup_n F n) = \sum_(n <oo) dm (F n).
  rewrite /density_meas integral_mkcond.
  transitivity (\int[mu]_x \sum_(n <oo) ((EFin \o f) \_ (F n)) x).
    apply: eq_integral => x _; rewrite density_patchE.
    apply/esym/cvg_lim => //.
    rewrite (_ : (fun n => _) =
        (fun n => (f x)%:E * \sum_(0 <= i < n) (\d_x (F i) : \bar real_realType))).
      apply: cvgeMl => //.
      exact: (@measure_semi_sigma_additive _ _ _ (\d_x) F mF tF mUF).
    apply/funext => n; rewrite ge0_sume_distrr//.
    by apply: eq_bigr => i _; rewrite density_patchE.
  rewrite integral_nneseries//.
  - by apply: eq_eseries => n _; rewrite [RHS]integral_mkcond.
  - move=> n; apply/(measurable_restrict _ (mF n)) => //.
    exact/EFin_measurable_fun/measurable_funTS.
  - by move=> n x _; apply: erestrict_ge0 => y _; rewrite lee_fin.
apply/cvg_closeP; split; last by rewrite closeE.
by apply: is_cvg_nneseries => *; exact: dm_ge0.
Qed.

HB.instance Definition _ := isMeasure.Build _ _ _ dm
  dm0 dm_ge0 dm_sigma_additive.

Lemma density_measE A : dm A = \int[mu]_(x in A) (f x)%:E.
Proof. by []. Qed.

Let integral_density_indic (D E : set T) : measurable D -> measurable E ->
  \int[dm]_(x in D) (\1_E x)%:E = \int[mu]_(x in D) ((\1_E x)%:E * (f x)%:E).
Proof.
move=> mD mE; rewrite integral_indic//= /density_meas setIC integral_setI_indic//.
by apply: eq_integral => x _; rewrite muleC.
Qed.

Let integral_density_nnsfun (D : set T) (h : {nnsfun T >-> real_realType}) :
  measurable D ->
  \int[dm]_(x in D) (h x)%:E = \int[mu]_(x in D) ((h x)%:E * (f x)%:E).
Proof.
move=> mD.
under [LHS]eq_integral do rewrite fimfunE -fsumEFin//.
rewrite [LHS]ge0_integral_fsum//; last 2 first.
  - move=> r.
    exact/EFin_measurable_fun/measurable_funrM/measurable_fun_indic.
  - by move=> n x _; rewrite EFinM nnfun_muleindic_ge0.
under [RHS]eq_integral.
  move=> x xD; rewrite fimfunE -fsumEFin// ge0_mule_fsuml; last first.
    by move=> r; rewrite EFinM nnfun_muleindic_ge0.
  over.
rewrite [RHS]ge0_integral_fsum//; last 2 first.
  - move=> r; apply: emeasurable_funM.
      exact/EFin_measurable_fun/measurable_funrM/measurable_fun_indic.
    exact/EFin_measurable_fun/measurable_funTS.
  - by move=> n x _; apply: mule_ge0; [rewrite EFinM; exact: nnfun_muleindic_ge0|rewrite lee_fin].
apply: eq_fsbigr => r _.
have [r0|r0] := ltP r 0%R.
  rewrite preimage_nnfun0//.
  under eq_integral do rewrite indic0 mulr0.
  under [RHS]eq_integral do rewrite indic0 mulr0 mul0e.
  by rewrite !integral0.
rewrite integralM_indic_nnsfun// integral_density_indic//.
under [RHS]eq_integral do rewrite EFinM -muleA.
rewrite ge0_integralM//.
- apply: emeasurable_funM.
    exact/EFin_measurable_fun/measurable_fun_indic.
  exact/EFin_measurable_fun/measurable_funTS.
- by move=> x _; rewrite mule_ge0// lee_fin.
Qed.

(* D2: integration against the density measure. *)
Lemma integral_density (g : T -> \bar real_realType) (A : set T) :
  measurable A -> measurable_fun setT g -> (forall x, 0 <= g x) ->
  \int[dm]_(x in A) g x = \int[mu]_(x in A) (g x * (f x)%:E).
Proof.
move=> mA mg g0.
have mgA : measurable_fun A g by exact: measurable_funTS.
have [g_ [ndg_ g_g]] := approximation mA mgA (fun x _ => g0 x).
transitivity (lim (fun n => \int[dm]_(x in A) (g_ n x)%:E)).
  rewrite -monotone_convergence//=.
  - by apply: eq_integral => x /[!inE] xA; apply/esym/cvg_lim => //=; exact: g_g.
  - by move=> n; exact/EFin_measurable_fun/measurable_funTS.
  - by move=> n x _; rewrite lee_fin.
  - by move=> x _ a b /ndg_ /lefP; rewrite lee_fin.
transitivity (lim (fun n => \int[mu]_(x in A) ((g_ n x)%:E * (f x)%:E))).
  by congr (lim _); apply/funext => n; rewrite integral_density_nnsfun.
rewrite -monotone_convergence//=.
- apply: eq_integral => x /[!inE] xA; apply/cvg_lim => //.
  by apply: cvgeMr => //; exact: g_g.
- move=> n; apply: emeasurable_funM.
    exact/EFin_measurable_fun/measurable_funTS.
  exact/EFin_measurable_fun/measurable_funTS.
- by move=> n x _; rewrite mule_ge0// lee_fin.
- move=> x _ a b /ndg_ /lefP ab; rewrite lee_wpmul2r ?lee_fin//.
Qed.

Let funepos_density (g : T -> R) x :
  (fun x => (g x * f x)%:E)^\+ x = (fun x => (g x)%:E)^\+ x * (f x)%:E.
Proof.
rewrite /funepos /=; have [g0|g0] := leP 0%R (g x).
  by rewrite !max_l// ?lee_fin ?mulr_ge0// EFinM.
rewrite !max_r ?mul0e// lee_fin; [exact: ltW|exact: mulr_le0_ge0 (ltW g0) (f0 x)].
Qed.

Let funeneg_density (g : T -> R) x :
  (fun x => (g x * f x)%:E)^\- x = (fun x => (g x)%:E)^\- x * (f x)%:E.
Proof.
rewrite /funeneg /=; have [g0|g0] := leP 0%R (g x).
  by rewrite !max_r ?mul0e// lee_fin oppr_le0// mulr_ge0.
rewrite !max_l.
- by rewrite -EFinM mulNr.
- by rewrite lee_fin oppr_ge0; exact: ltW.
- by rewrite lee_fin oppr_ge0; exact: mulr_le0_ge0 (ltW g0) (f0 x).
Qed.

Lemma integral_density_real (g : T -> R) (A : set T) : measurable A ->
  measurable_fun setT (g : T -> real_realType) ->
  \int[dm]_(x in A) (g x)%:E = \int[mu]_(x in A) (g x * f x)%:E.
Proof.
move=> mA mg; have mEg : measurable_fun setT (fun x => (g x)%:E).
  exact/EFin_measurable_fun.
rewrite [LHS]integralE [RHS]integralE.
rewrite (integral_density mA (emeasurable_fun_funepos mEg) (funepos_ge0 _)).
rewrite (integral_density mA (emeasurable_fun_funeneg mEg) (funeneg_ge0 _)).
by congr (_ - _); apply: eq_integral => x _;
  rewrite ?funepos_density ?funeneg_density.
Qed.

Lemma integrable_density (g : T -> R) :
  measurable_fun setT (g : T -> real_realType) ->
  dm.-integrable setT (EFin \o g) <-> mu.-integrable setT (fun x => (g x * f x)%:E).
Proof.
move=> mg.
have mEg : measurable_fun setT (EFin \o g) by exact/EFin_measurable_fun.
have mgf : measurable_fun setT (fun x => (g x * f x)%:E).
  by apply/EFin_measurable_fun; exact: measurable_funM.
rewrite /integrable.
rewrite (_ : \int[_]_x `|(EFin \o g) x| = \int[mu]_x `|(g x * f x)%:E|).
  by split=> -[_ h]; split.
have mab : measurable_fun setT (fun x => `|(EFin \o g) x|).
  exact: measurable_fun_comp.
rewrite (integral_density measurableT mab (fun x => abse_ge0 _)).
apply: eq_integral => x _ /=.
by rewrite normrM (@ger0_norm _ (f x)) ?EFinM.
Qed.

Lemma integral_density_fin (g : T -> R) :
  measurable_fun setT (g : T -> real_realType) ->
  mu.-integrable setT (fun x => (g x * f x)%:E) ->
  \int[dm]_x (g x)%:E = \int[mu]_x (g x * f x)%:E.
Proof. by move=> mg _; exact: integral_density_real. Qed.

End density_measure.
